#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A blkbackd that finds a Connected vbd whose frontend state is junk
# (written while no blkbackd ran) does not take it over: fatal, the
# error node and Closing, as the table has it for a Connected vbd, until
# the frontend starts over.  The check for a takeover reported the junk
# (error node, Closing) and then the vbd was probed anyway: InitWait,
# the junk never reported again (found by fuzz-control).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
frozen_guest
stop_backend
xenstore-write $fe/state 9
xs_record "$BK_TMP/watch"
start_backend
xs_wait $be/state 5
xs_is $be/error "state: the frontend's state \"9\" at $fe/state is not a XenbusState in 1..6"
bk_sync "$BK_TMP/watch"	# the new daemon has done all it does with the vbd
n=$(grep -cx "$be/state" "$BK_TMP/watch")
[ "$n" = 1 ] || fail "$n writes of the backend state, not just its Closing"
xs_is $be/state 5
served_by $DOM "$(bk_pid)" && fail "a junk frontend was taken over"
# the frontend starts over: Closed, then Initialising
kill -KILL $HOLD
wait $HOLD 2>/dev/null || true
xenstore-write $fe/state 6
xs_wait $be/state 6
xenstore-write $fe/state 1
xs_wait $be/state 2
io_works $DOM
stop_backend
exit 0
