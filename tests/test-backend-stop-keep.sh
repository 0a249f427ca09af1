#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stopping blkbackd does not close the guests' devices (the default):
# SIGTERM, and SIGINT the same, with writes in flight: every request
# taken is done and answered, the queues are torn down, blkbackd exits
# 0, and nothing at all is written to xenstore: the backend's state stays
# 4 (no Closed), the frontend's stays 4, no error node; a warning names
# the vbds whose guests now wait for the next blkbackd.  (The closing
# stop, --close-on-exit, is test-backend-initwait's and -sigterm-drain's.)
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$(command -v xenstore-watch)"
start_sim_backend

for sig in TERM INT; do
	new_guest
	# every host I/O takes 300 ms: the signal certainly finds writes in flight
	add_disk $DOM memory:4M,delay-ms=300
	be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
	writes_in_flight $DOM 4 --no-close
	grep -q "vbd=$DOM/51712 ring=0 op=write id=4 " "$BACKEND_TRACE" &&
		fail "SIG$sig: too late: all writes answered before the signal"
	# every xenstore change from now on, in order
	xs_record "$BK_TMP/watch.$sig"

	stop_backend $sig
	wait $front || { cat "$BK_TMP/w$DOM.out"; fail "SIG$sig: a write was not answered OKAY"; }
	writes_answered $DOM 4 0 mem-write || fail "SIG$sig: not every write was done and answered"
	grep -q "signal $([ $sig = TERM ] && echo 15 || echo 2): stopping: draining every device, then leaving them attached" \
		"$BACKEND_LOG" || fail "SIG$sig: no log line saying the devices stay attached"
	grep -q "vbd $DOM/51712: disconnected" "$BACKEND_LOG" ||
		fail "SIG$sig: the queues were not torn down"
	# the admin is told, at warning level, that guests now wait (the
	# first round's guest is Connected too, served again by the restart)
	grep -Eq "warning: stopped with [0-9]+ vbds? of [0-9]+ guests? left Connected without a backend \((.* )?$DOM/51712( .*)?\): .* waits until a blkbackd starts again" \
		"$BACKEND_LOG" || fail "SIG$sig: no warning naming the guests left waiting"
	xs_mark "$BK_TMP/watch.$sig"	# blkbackd exited: all it wrote is in the watch now
	xs_is "$be/state" 4
	xs_is "$fe/state" 4
	xs_absent "$be/error"
	[ "$(xs_count "$BK_TMP/watch.$sig" $be)" = 0 ] ||
		{ cat "$BK_TMP/watch.$sig"; fail "SIG$sig: blkbackd wrote under $be while stopping"; }
	[ "$(xs_count "$BK_TMP/watch.$sig" $fe/state)" = 0 ] ||
		{ cat "$BK_TMP/watch.$sig"; fail "SIG$sig: the frontend's state changed"; }
	# this guest is done: the toolstack removes its disk before the next round
	blkfront-test xl-remove --domid $DOM --force >/dev/null || fail "xl-remove"
	: > "$BACKEND_LOG"
	[ $sig = INT ] || start_backend
done
exit 0
