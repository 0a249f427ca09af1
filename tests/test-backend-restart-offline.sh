#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A blkbackd started after the toolstack closed a vbd (online=0 and
# state 5, libxl's device removal, while no blkbackd ran) waits for the
# frontend's Closed like a running one: Closing while the frontend is
# still Connected, Closed once it closes, and a frontend state that is
# junk is reported (fatal) as always.  It used to go Closed at once: the
# toolstack's close was handled before the frontend was looked at
# (found by fuzz-control).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend

frozen_guest
stop_backend
xenstore-write $be/online 0 $be/state 5
start_backend
bk_sync	# the new daemon has done all it does with the vbd
xs_is $be/state 5	# the frontend is still Connected
xenstore-write $fe/state 6
xs_wait $be/state 6
kill -KILL $HOLD
wait $HOLD 2>/dev/null || true

# the same with a frontend whose state is junk: fatal, Closing
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:1M
xs_wait $be/state 2
stop_backend
xenstore-write $be/online 0 $fe/state 9
start_backend
xs_wait $be/error "state: the frontend's state \"9\" at $fe/state is not a XenbusState in 1..6"
bk_sync
xs_is $be/state 5
stop_backend
exit 0
