#!/usr/bin/env bash
# A vbd removed and added again (rm -r, then xl-add of the same device)
# before blkbackd looked is a new vbd: it is probed afresh (InitWait),
# and nothing of the old one -- its close, its errors, its connection --
# reaches the new directory.  blkbackd takes every pending event before
# acting, so "removed, added again" looked like "still there", and the
# old vbd's object went on with the new directory: here the old vbd was
# closing (online=0, the frontend not Closed yet) and the new one stayed
# Closing for ever; in fuzz-control's run the old vbd's failed connect
# wrote its error and Closing into the new one.  Now the directory
# node's own event (removed, or made again) retires the old object.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
be=$(bk_be $DOM)
add_disk $DOM memory:1M
xs_wait $be/state 2
xenstore-write $be/online 0	# the frontend is Initialising: Closing, waiting
xs_wait $be/state 5
pid=$(bk_pid)
kill -STOP $pid
_cont() { kill -CONT "$1" 2>/dev/null || true; }
cleanup_fn _cont $pid
blkfront-test xl-remove --domid $DOM --force || fail "xl-remove failed"
add_disk $DOM memory:1M
kill -CONT $pid
xs_wait $be/state 2
sleep 0.3
xs_is $be/state 2
xs_absent $be/error
grep -q "vbd $DOM/51712: removed" "$BACKEND_LOG" || fail "the old vbd was not forgotten"
io_works $DOM
stop_backend
exit 0
