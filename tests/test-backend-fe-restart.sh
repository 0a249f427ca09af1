#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frontend that starts over without the backend seeing it close:
#  1. Connected, and the frontend's state goes straight to Initialising
#     (its Closing overwritten before blkbackd read it, or a guest that
#     restarted): blkbackd goes Closing, disconnects, probes again
#     (InitWait), and a new connection serves byte-exact I/O.
#  2. Closed during a drain (writes of 1 s each in flight), then
#     Initialising at once: Closing while it drains (never Connected with
#     nothing behind it), then InitWait, and the writes all answered OKAY.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
N=3

# 1. Connected -> the frontend writes Initialising
new_guest; A=$DOM
fe=/local/domain/$A/device/vbd/51712
add_disk $A memory:4M
io_works $A --no-close
xs_is "$(bk_be $A)/state" 4
xenstore-write $fe/state 1
xs_wait "$(bk_be $A)/state" 2 5
# the old connection closed first (Closing, then InitWait: xensim's
# record of blkbackd's writes) and is gone (xensim: no ring mapped, no
# port bound, until the guest connects again)
be_states_are $A 2 4 5 2
[ "$(bk_holds $A)" = "0 0" ] || fail "the old connection was not torn down: blkbackd holds \"$(bk_holds $A)\""
io_works $A
xs_wait "$(bk_be $A)/state" 6
be_states_are $A 2 4 5 2 4 5 6

# 2. Closed during a drain, then Initialising at once
new_guest; B=$DOM
fe=/local/domain/$B/device/vbd/51712
add_disk $B memory:4M,delay-ms=1000
writes_in_flight $B $N --no-close
xenstore-write $fe/state 6
xs_wait "$(bk_be $B)/state" 5 5
xenstore-write $fe/state 1
bk_sync	# blkbackd has handled that write
xs_is "$(bk_be $B)/state" 5	# still draining
grep -q "vbd=$B/51712 ring=0 op=write id=$N " "$BACKEND_TRACE" &&
	fail "drained already: the test proves nothing (too slow a machine?)"
xs_wait "$(bk_be $B)/state" 2 $(( N * 2 + 5 ))
writes_answered $B $N 0 mem-write || fail "the writes were not all done and answered OKAY"
wait $front || { cat "$BK_TMP/w$B.out"; fail "the old connection did not get OKAY for every write"; }
io_works $B
xs_wait "$(bk_be $B)/state" 6
good_device_works memory:1M
stop_backend
exit 0
