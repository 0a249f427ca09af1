#!/usr/bin/env bash
# Clients that connect to the control socket and say nothing (a stuck
# scraper) hold up neither the control socket nor the guests: with 20
# of them connected (more than the 16 whose request lines blkbackd
# waits for at once: the longest-waiting are dropped), blkbackd-ctl
# status answers, a new guest's disk connects, and each idle client is
# told "no request line within 2 s" or dropped.  (Before, each idle
# client held the control thread for 2 s: 40 s of no xenstore work.)
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
# 21 clients (blkbackd-ctl's too) for 16 places: at most 5 idle ones
# were dropped unanswered (fewer if some had timed out already); every
# other was told, at its deadline, why it was closed
[ "$told" -ge 15 ] && [ "$told" -le 20 ] ||
	fail "idle clients told of their timeout: $told, expected 15..20"
kill -0 "$(cat "$BACKEND_PIDFILE")" || fail "blkbackd died"
stop_backend
exit 0
