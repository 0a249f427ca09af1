#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd removed and added again (rm -r, then xl-add of the same device)
# before blkbackd looked is a new vbd: it is probed afresh (InitWait),
# and nothing of the old one -- its close, its errors, its connection --
# reaches the new directory.  blkbackd takes every pending event before
# acting, so "removed, added again" looked like "still there", and the
# old vbd's object went on with the new directory: here the old vbd was
# closing (online=0, the frontend not Closed yet) and the new one stayed
# Closing for ever; in fuzz-control's run the old vbd's failed connect
# wrote its error and Closing into the new one.  Now the directory
# node's own event (removed, or made again) retires the old object, also
# when it comes among so many others that blkbackd rescans every vbd.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
pid=$(bk_pid)
_cont() { kill -CONT "$1" 2>/dev/null || true; }
cleanup_fn _cont $pid

# readd EXTRA: the above, with EXTRA other keys of the old vbd written
# first in the same stop, each its own path in blkbackd's next batch of
# events.  More paths than blkbackd keeps apart (32) make the batch a
# rescan of every vbd, which must retire the old object too.
readd() {
	local extra=$1 i kv=()
	new_guest
	be=$(bk_be $DOM)
	add_disk $DOM memory:1M
	xs_wait $be/state 2
	xenstore-write $be/online 0	# the frontend is Initialising: Closing, waiting
	xs_wait $be/state 5
	kill -STOP $pid
	for (( i = 0; i < extra; i++ )); do
		kv+=("$be/x-note-$i" "$i")
	done
	[ "$extra" = 0 ] || xenstore-write "${kv[@]}"
	blkfront-test xl-remove --domid $DOM --force || fail "xl-remove failed"
	add_disk $DOM memory:1M
	kill -CONT $pid
	xs_wait $be/state 2
	bk_sync	# blkbackd has done all it does with the new vbd
	xs_is $be/state 2
	xs_absent $be/error
	grep -q "vbd $DOM/51712: removed" "$BACKEND_LOG" ||
		fail "the old vbd was not forgotten ($extra other keys)"
	io_works $DOM
}
readd 0
readd 40
stop_backend
exit 0
