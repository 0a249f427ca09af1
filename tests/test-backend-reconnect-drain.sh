#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frontend that reconnects while its old connection still drains:
# Closing, then Initialising at once (it does not wait for Closed).
# blkbackd stays Closing until every write in flight (1 s each) is
# answered OKAY, then probes again (InitWait), connects the new ring and
# serves byte-exact I/O; nothing leaks (file descriptors back to the
# count before).  (A memory store starts empty at each connect, so the
# drained writes are checked in the trace.)
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
pid=$(cat "$BACKEND_PIDFILE")
fds() { ls /proc/$pid/fd | wc -l; }
N=3

new_guest; A=$DOM
fe=/local/domain/$A/device/vbd/51712
add_disk $A memory:4M,delay-ms=1000
# the baseline after one plain connect and close (the sim transport
# keeps the guest's memory file open once it has mapped from it)
echo "# connect and close" > "$BK_TMP/empty"
run_script $A "$BK_TMP/empty"
xs_wait "$(bk_be $A)/state" 6
fd0=$(fds)
# --no-close: the old connection's process leaves the state to the new one
writes_in_flight $A $N --no-close; old=$front

xenstore-write $fe/state 5
xs_wait "$(bk_be $A)/state" 5 5
xenstore-write $fe/state 1
bk_sync	# blkbackd has handled that write
# still draining: Initialising is remembered, not acted on
xs_is "$(bk_be $A)/state" 5
grep -q "vbd=$A/51712 ring=0 op=write id=$N " "$BACKEND_TRACE" &&
	fail "drained already: the test proves nothing (too slow a machine?)"

# the new connection: waits for InitWait (after the drain), connects,
# writes and reads back
cat > "$BK_TMP/new" <<'EOS'
fill p20 seed:99
fill p21 seed:98
send op=write sector=64 seg=p20 seg=p21 expect=OKAY
send op=read sector=64 seg=p22 seg=p23 expect=OKAY
check p22 seed:99
check p23 seed:98
EOS
run_script $A "$BK_TMP/new"
wait $old || { cat "$BK_TMP/w$A.out"; fail "the old connection did not get OKAY for every write"; }
writes_answered $A $N 0 mem-write || fail "the old connection's writes were not all done and answered OKAY"
xs_wait "$(bk_be $A)/state" 6
# every state blkbackd wrote (xensim's record): 3 connects, each closed
echo "states: $(be_states $A)"
[ "$(be_states $A | tr ' ' '\n' | grep -c '^4$')" = 3 ] || fail "not exactly 3 connects: $(be_states $A)"
wait_for 5 bk_forgot $A || fail "blkbackd still holds \"$(bk_holds $A)\" of A"
# the drain ended before the reconnect's probe (from the log: the end of
# a drain is nothing the guest or xenstore sees; the guest got every
# answer, checked above)
awk -v v="vbd $A/51712: " 'index($0, v "disconnected") { d = 1; next }
	d && index($0, v "Closing -> InitWait") { ok = 1 } { d = 0 } END { exit !ok }' "$BACKEND_LOG" ||
	fail "the reconnect's InitWait does not follow the end of the drain"
fd1=$(fds)
[ "$fd1" = "$fd0" ] || { ls -l /proc/$pid/fd; fail "file descriptors leak: $fd0 -> $fd1"; }
stop_backend
exit 0
