#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest that reconnects in a loop.  Every state change of a vbd is
# logged at most 20 times per 10 s, but the line of each connect ("->
# Connected (...)") was not limited: a guest doing whole handshakes in a
# loop added some 25 lines a second to the log, for as long as it
# liked.  Now connects count as the other state changes do, and the next
# window says how many lines were left out.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
add_disk $DOM memory:1M
: > "$BK_TMP/empty"
n=30
t0=$(date +%s)
for (( i = 0; i < n; i++ )); do
	blkfront-test script --domid $DOM "$BK_TMP/empty" > "$BK_TMP/s.out" 2>&1 ||
		{ cat "$BK_TMP/s.out"; fail "connect $i failed"; }
done
secs=$(( $(date +%s) - t0 + 1 ))
# one more connect, after the window: its line says what was left out
sleep 10
blkfront-test script --domid $DOM "$BK_TMP/empty" > "$BK_TMP/s.out" 2>&1 ||
	{ cat "$BK_TMP/s.out"; fail "the last connect failed"; }
lines=$(grep -c "vbd $DOM/51712: " "$BACKEND_LOG" || true)
connects=$(grep -c "vbd $DOM/51712: .* -> Connected (" "$BACKEND_LOG" || true)
windows=$(( secs / 10 + 2 ))
# each connect and close writes five or six lines: at most 20 a window
[ "$lines" -le $(( 21 * windows + 1 )) ] ||
	fail "$lines lines for vbd $DOM/51712 over $secs s of $((n + 1)) connects (at most $((21 * windows + 1)))"
[ "$connects" -lt $(( n + 1 )) ] || fail "every one of the $((n + 1)) connects was logged"
grep -q "vbd $DOM/51712: [0-9]* state-change lines not logged" "$BACKEND_LOG" ||
	fail "no line says how many were left out"
stop_backend
exit 0
