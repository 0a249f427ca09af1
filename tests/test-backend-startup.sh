#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd as a service: every start-up error is an exit status before it
# detaches (a readiness pipe: without -f the command returns 0 only once
# the daemon serves: its pidfile and control socket are there at once);
# sd_notify READY=1 (when built with libsystemd); --log-file with
# ISO-8601 timestamps, reopened on SIGHUP as logrotate expects, and the
# trace too (t= on every line); a log or trace that cannot be written is
# reported once, not ignored.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim
bk=(blkbackd --transport=sim --sim-dir="$XENSIM_DIR")

# ---- detached start: ready when the command returns ----
"${bk[@]}" --pidfile="$BACKEND_PIDFILE" --log-file="$BK_TMP/log" --trace="$BK_TMP/trace" \
	2>"$BK_TMP/start.err" || fail "blkbackd (detached) exited $?: $(cat "$BK_TMP/start.err")"
[ -s "$BACKEND_PIDFILE" ] || fail "the command returned before the daemon wrote its pidfile"
pid=$(cat "$BACKEND_PIDFILE")
cleanup_fn kill -9 "$pid"
blkbackd-ctl status >/dev/null || fail "the command returned before the daemon answered"
[ ! -s "$BK_TMP/start.err" ] || fail "a good start wrote to stderr: $(cat "$BK_TMP/start.err")"
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] || fail "the daemon is not in a session of its own"

# ---- a second one fails before detaching, with the reason on stderr ----
rc=0; "${bk[@]}" --pidfile="$BK_TMP/second.pid" 2>"$BK_TMP/second.err" || rc=$?
[ $rc = 1 ] || fail "second blkbackd (detached): exit $rc, expected 1"
grep -q "another blkbackd (pid $pid) already serves this xenstore" "$BK_TMP/second.err" ||
	fail "second blkbackd: no refusal on stderr: $(cat "$BK_TMP/second.err")"
[ ! -e "$BK_TMP/second.pid" ] || fail "the refused blkbackd wrote its pidfile"
# and another start-up error: no xenstore there
rc=0; XENSTORED_PATH=$BK_TMP/nothing "${bk[@]}" 2>"$BK_TMP/noxs.err" || rc=$?
[ $rc = 1 ] && grep -q "cannot connect to xenstore at $BK_TMP/nothing" "$BK_TMP/noxs.err" ||
	fail "no xenstore: exit $rc, $(cat "$BK_TMP/noxs.err")"
# XENSTORED_PATH set but empty: said so, not "cannot connect to xenstore at : "
rc=0; XENSTORED_PATH= "${bk[@]}" 2>"$BK_TMP/emptyxs.err" || rc=$?
[ $rc = 1 ] && grep -q "XENSTORED_PATH is set but empty" "$BK_TMP/emptyxs.err" ||
	fail "empty XENSTORED_PATH: exit $rc, $(cat "$BK_TMP/emptyxs.err")"

# ---- the log file: timestamps; SIGHUP reopens it and the trace ----
guest_with_disk 4M
io_works $DOM
log_lines "$BK_TMP/log" | grep -q "^blkbackd: vbd $DOM/51712: InitWait -> Connected" ||
	fail "no Connected line in the log file"
grep -Evq '^t=[0-9]+ vbd=' "$BK_TMP/trace" && fail "trace lines without t=: $(grep -Ev '^t=[0-9]+ vbd=' "$BK_TMP/trace" | head -3)"
awk '{ t = substr($1, 3) + 0; if (t < last) exit 1; last = t }' "$BK_TMP/trace" ||
	fail "the trace's t= go backwards on one queue"
mv "$BK_TMP/log" "$BK_TMP/log.1"
mv "$BK_TMP/trace" "$BK_TMP/trace.1"
kill -HUP "$pid"
wait_for 10 test -s "$BK_TMP/log" || fail "SIGHUP did not reopen the log file"
grep -q "SIGHUP: reopened the log and trace files" "$BK_TMP/log" || fail "the new log lacks the SIGHUP line"
io_works $DOM
wait_for 10 grep -q "vbd=$DOM/51712 ring=0 op=read " "$BK_TMP/trace" || fail "SIGHUP did not reopen the trace"
[ "$(grep -c "op=write" "$BK_TMP/trace.1")" = 1 ] || fail "the old trace got new lines"
kill -TERM "$pid"
wait_for 30 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd ignored SIGTERM"
grep -q "stats vbd=$DOM/51712 " "$BK_TMP/log" || fail "the final lines are not in the reopened log"
log_lines "$BK_TMP/log" >/dev/null
log_lines "$BK_TMP/log.1" >/dev/null

# ---- a log or trace that cannot be written: said once ----
start_daemon -P "$BACKEND_PIDFILE" "${bk[@]}" -f --pidfile="$BACKEND_PIDFILE" \
	--log-file=/dev/full 2>"$BK_TMP/full.err"
pid=$(cat "$BACKEND_PIDFILE")
io_works $DOM
io_works $DOM
kill -TERM "$pid"
wait_for 30 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd ignored SIGTERM"
[ "$(grep -c "cannot write the log file /dev/full: No space left on device" "$BK_TMP/full.err")" = 1 ] ||
	fail "the log's write errors were not said exactly once: $(cat "$BK_TMP/full.err")"

start_daemon -P "$BACKEND_PIDFILE" "${bk[@]}" -f --pidfile="$BACKEND_PIDFILE" \
	--trace=/dev/full 2>"$BK_TMP/tfull.err"
pid=$(cat "$BACKEND_PIDFILE")
io_works $DOM
io_works $DOM
kill -TERM "$pid"
wait_for 30 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd ignored SIGTERM"
[ "$(grep -c "cannot write the trace file /dev/full: No space left on device" "$BK_TMP/tfull.err")" = 1 ] ||
	fail "the trace's write errors were not said exactly once: $(grep -c "cannot write" "$BK_TMP/tfull.err")"

# ---- relative paths, detached: meant from where it was started, at
# start and after an upgrade (the daemon itself works from /) ----
rel=$BK_TMP/rel/here n=rel$$
mkdir -p "$rel"
(cd "$rel" && blkbackd --transport=sim --sim-dir="$(realpath --relative-to=. "$XENSIM_DIR")" \
	--state-dir=st --pidfile=$n.pid --log-file=$n.log --trace=$n.trace) 2>"$BK_TMP/rel.err" ||
	fail "blkbackd (relative paths) exited $?: $(cat "$BK_TMP/rel.err")"
pid=$(cat "$rel/$n.pid")
cleanup_fn kill -9 "$pid"
cleanup_fn rm -f "/$n.pid" "/$n.log" "/$n.trace"
io_works $DOM
[ -d "$rel/st" ] || fail "--state-dir=st was not made where blkbackd started"
connects() { grep -c "vbd $DOM/51712: .*-> Connected" "$rel/$n.log" || true; }
[ "$(connects)" = 1 ] || fail "relative --log-file: $(connects) Connected lines in it, expected 1"
blkbackd-ctl upgrade "$abs_top_builddir/backend/blkbackd" >/dev/null || fail "upgrade (relative paths) failed"
io_works $DOM
[ "$(cat "$rel/$n.pid")" = "$pid" ] || fail "after the upgrade the pidfile says $(cat "$rel/$n.pid")"
wait_for 10 eval '[ "$(connects)" = 2 ]' || fail "after the upgrade the log went elsewhere (/$n.log?)"
[ ! -e "/$n.log" ] && [ ! -e "/$n.pid" ] && [ ! -e "/$n.trace" ] ||
	fail "the upgraded blkbackd took its relative paths from /"
kill -TERM "$pid"
wait_for 30 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd ignored SIGTERM"

# ---- sd_notify ----
if grep -q "define HAVE_LIBSYSTEMD 1" "$abs_top_builddir/config.h"; then
	requires python3 --version
	python3 - "$BK_TMP/notify.sock" "$BK_TMP/notify.out" <<'EOP' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "w") as out:
    end = time.time() + 60
    while time.time() < end:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            break
        out.write(m.replace("\n", " ") + "\n")
        out.flush()
        if "STOPPING=1" in m:
            break
EOP
	listener=$!
	cleanup_fn kill $listener
	wait_for 10 test -S "$BK_TMP/notify.sock" || fail "the notify listener did not start"
	NOTIFY_SOCKET=$BK_TMP/notify.sock start_daemon -P "$BACKEND_PIDFILE" "${bk[@]}" -f \
		--pidfile="$BACKEND_PIDFILE" 2>>"$BACKEND_LOG"
	pid=$(cat "$BACKEND_PIDFILE")
	wait_for 10 grep -q "READY=1 MAINPID=$pid" "$BK_TMP/notify.out" || fail "no READY=1: $(cat "$BK_TMP/notify.out")"
	kill -TERM "$pid"
	wait_for 30 grep -q "STOPPING=1" "$BK_TMP/notify.out" || fail "no STOPPING=1"
	wait_for 30 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd ignored SIGTERM"
else
	skip_part "sd_notify not tested: built without libsystemd"
fi
exit 0
