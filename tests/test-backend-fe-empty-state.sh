#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frontend state node written empty ("") is junk like "9" or "abc":
# fatal (the error node, Closing), from InitWait and from Connected.  It
# used to be ignored: the value last reported was kept as a string,
# "" meaning none, so an empty node compared equal to "nothing reported
# yet" and was never reported (found by fuzz-control).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend

# InitWait, then ""
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:1M
xs_wait $be/state 2
xenstore-write $fe/state ""
xs_wait $be/state 5
xs_is $be/error "state: the frontend's state \"\" at $fe/state is not a XenbusState in 1..6"
# Closed clears it; Initialising probes again
xenstore-write $fe/state 6
xs_wait $be/state 6
xenstore-write $fe/state 1
xs_wait $be/state 2
# the same junk again after a valid state: reported again
xenstore-write $fe/state ""
xs_wait $be/state 5

# a connected guest (held, the ring valid) whose state node goes ""
frozen_guest
xenstore-write $fe/state ""
xs_wait $be/state 5
grep -q "vbd $DOM/51712: state: the frontend's state \"\" at $fe/state is not" "$BACKEND_LOG" ||
	fail "the empty state was not logged"
kill -KILL $HOLD
wait $HOLD 2>/dev/null || true
stop_backend
exit 0
