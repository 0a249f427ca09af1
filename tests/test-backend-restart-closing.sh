#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A blkbackd that finds a vbd Closing -- its predecessor's answer to the
# frontend's Closing -- while the frontend has meanwhile started over
# (Initialising) probes it: InitWait, and the frontend connects.  It used
# to take that Closing for the toolstack's close (someone else writing
# state 5) and wait for the frontend's Closed, while the frontend waited
# for InitWait: neither moved (found by fuzz-control).  The toolstack's
# close writes online=0 too, and that is still honoured.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:1M
xs_wait $be/state 2
xenstore-write $fe/state 5
xs_wait $be/state 5
stop_backend
xenstore-write $fe/state 1	# the guest restarted its frontend meanwhile
start_backend
xs_wait $be/state 2
xs_absent $be/error
io_works $DOM

# with online=0 it is the toolstack's close: Closing until the frontend
# is Closed
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:1M
xs_wait $be/state 2
stop_backend
xenstore-write $be/online 0 $be/state 5
start_backend
bk_sync	# the new daemon has done all it does with the vbd
xs_is $be/state 5
xenstore-write $fe/state 6
xs_wait $be/state 6
stop_backend
exit 0
