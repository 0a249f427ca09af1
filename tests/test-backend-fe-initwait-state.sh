#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frontend that writes 2 (InitWait, a backend's state) to its state
# node is fatal, as any state outside the frontend's (DESIGN-NOTES' table,
# column "other"; Linux blkback's frontend_changed default case): the
# error node and Closing, from InitWait and from Connected, and under a
# toolstack's close.  blkbackd took it as Closed (found by
# fuzz-control: it disconnected a connected guest and wrote Closed, but
# waited for ever under online=0).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
err() { echo "state: the frontend's state \"2\" (InitWait) at $1/state is a backend's state"; }

# InitWait, then 2; Closed and Initialising start over
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:1M
xs_wait $be/state 2
xenstore-write $fe/state 2
xs_wait $be/state 5
xs_is $be/error "$(err $fe)"
xenstore-write $fe/state 6
xs_wait $be/state 6
xenstore-write $fe/state 1
xs_wait $be/state 2
io_works $DOM

# a connected guest (held) whose state node goes 2
frozen_guest
xenstore-write $fe/state 2
xs_wait $be/state 5
xs_is $be/error "$(err $fe)"
bk_sync	# blkbackd has done all it does on that write
xs_is $be/state 5
kill -KILL $HOLD
wait $HOLD 2>/dev/null || true
stop_backend
exit 0
