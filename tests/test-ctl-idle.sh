#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Clients that connect to the control socket and say nothing (a stuck
# scraper) hold up neither the control socket nor the guests: with 20
# of them connected (more than the 16 blkbackd serves at once: the
# others wait in the listen backlog), blkbackd-ctl status answers, a
# new guest's disk connects, and every idle client is told "no request
# line within 2 s".  (Before, each idle client held the control thread
# for 2 s: 40 s of no xenstore work.)
# 2. Clients that ask for a list and never read it (an answer bigger
# than a socket buffer) hold up nothing either; and 20 clients asking at
# once are all answered (none dropped to make room).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires python3 -c 'import socket'
start_sim_backend
sock=$XENSTORED_PATH.blkbackd-0.ctl
wait_for 10 test -S "$sock" || fail "no control socket"
python3 - "$sock" > "$BK_TMP/idle.out" 2>&1 <<'PY' &
import socket, sys, time
conns = []
for i in range(20):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    conns.append(s)
print("connected", flush=True)
time.sleep(6)
told = 0
for s in conns:
    s.settimeout(0.5)
    try:
        data = s.recv(200)
    except (socket.timeout, ConnectionResetError):
        data = b""
    if b"no request line within 2 s" in data:
        told += 1
print("told", told, flush=True)
PY
idle=$!
cleanup_fn kill $idle
wait_for 10 grep -q connected "$BK_TMP/idle.out" || fail "the idle clients could not connect"
timeout 10 blkbackd-ctl --transport=sim status > "$BK_TMP/status" ||
	fail "blkbackd-ctl status did not answer beside 20 idle clients"
grep -q "^pid: $(cat "$BACKEND_PIDFILE")$" "$BK_TMP/status" || fail "status: $(cat "$BK_TMP/status")"
guest_with_disk 4M
echo "send op=write sector=0 seg=p0 expect=OKAY" > "$BK_TMP/s"
run_script $DOM "$BK_TMP/s"
wait $idle || fail "the idle clients' script failed: $(cat "$BK_TMP/idle.out")"
told=$(sed -n 's/^told //p' "$BK_TMP/idle.out")
# every one was told, at its deadline, why it was closed
[ "$told" = 20 ] || fail "idle clients told of their timeout: $told, expected 20"
kill -0 "$(cat "$BACKEND_PIDFILE")" || fail "blkbackd died"

# a request line of exactly BK_CTL_MAX_LINE (4096) bytes with its
# newline is taken, a longer one is E2BIG; a known command with a
# wrong argument gets its usage
python3 - "$sock" <<'PY' || fail "request lines at the limit"
import socket, sys
def ask(line):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(line)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            return data
        data += b
a = ask(b"status" + b" " * 4089 + b"\n")
assert len(b"status" + b" " * 4089 + b"\n") == 4096
assert a.endswith(b"\nok\n"), a[-200:]
# 4096 bytes and no newline yet: the line would be longer (sent with
# no byte more, so that the close after the answer resets nothing)
b = ask(b"status" + b" " * 4090)
assert b == b"error E2BIG request too long\n", b
c = ask(b"status extra\n")
assert c == b"error EINVAL usage: status (no argument)\n", c
# a vbd name blkbackd-ctl would not send (it refuses it itself): the
# whole argument quoted back, and "-1", "+1" are no numbers
for bad in (b"nonsense", b"1/abc", b"1/-51712", b"+1/51712"):
    d = ask(b"stats " + bad + b"\n")
    assert d == b'error EINVAL "' + bad + b'" is not a vbd: DOMID/DEVID (e.g. 1/51712)\n', d
PY

# 2. a list of about 320 KB (80 vbds with 4000-byte params, refused at
# probe but listed): more than the socket buffers hold
long=/nonexistent/$(printf 'x%.0s' $(seq 1 3980))
new_guest
for d in $(seq 1 80); do add_vbd $DOM $d "$long"; done
wait_for 30 eval '[ "$(xenstore-read "$(bk_be $DOM 80)/state" 2>/dev/null)" = 5 ]' ||
	fail "the 80th vbd was not probed"
python3 - "$sock" > "$BK_TMP/deaf.out" 2>&1 <<'PY' &
import socket, sys, time
conns = []
for i in range(4):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(b"list\n")
    conns.append(s)
print("asked", flush=True)
time.sleep(15)
PY
deaf=$!
cleanup_fn kill $deaf
wait_for 10 grep -q asked "$BK_TMP/deaf.out" || fail "the deaf clients could not ask"
t0=$EPOCHREALTIME
timeout 10 blkbackd-ctl --transport=sim status > "$BK_TMP/status2" ||
	fail "blkbackd-ctl status did not answer beside 4 clients not reading their lists"
echo "status answered in $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { printf "%.2f", b - a }') s beside them"
guest_with_disk 4M
run_script $DOM "$BK_TMP/s"
kill $deaf 2>/dev/null || true
python3 - "$sock" <<'PY' || fail "20 clients listing at once: not all answered"
import socket, sys, threading
res = []
def one():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(sys.argv[1])
    s.sendall(b"list\n")
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError as e:
        data += repr(e).encode()
    res.append(data.endswith(b"\nok\n") and data.count(b"\nvbd ") + data.startswith(b"vbd ") == 82)
ts = [threading.Thread(target=one) for _ in range(20)]
for t in ts: t.start()
for t in ts: t.join()
print("answered whole:", sum(res), "of", len(res))
sys.exit(0 if all(res) and len(res) == 20 else 1)
PY
stop_backend
exit 0
