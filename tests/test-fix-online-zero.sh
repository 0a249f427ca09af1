#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# online=0 (the toolstack's "detach"), alone or with state=5 as libxl
# writes them: the backend goes Closing (5) at once and Closed (6) only
# once the frontend has closed or is gone, as Linux blkback does
# (frontend_changed: Closed and not online), instead of pulling the ring
# from under a connected guest.  The guest here is a blkfront-test held
# with SIGSTOP, so the frontend's steps are written by hand.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend

# "false" does not scan as a number: offline, as Linux's xenbus_dev_is_online
for how in "online 0" "online 0 state 5" "online false"; do
	frozen_guest
	# shellcheck disable=SC2086
	set -- $how
	args=()
	while [ $# -gt 0 ]; do args+=("$be/$1" "$2"); shift 2; done
	xenstore-write "${args[@]}"
	xs_wait $be/state 5
	bk_sync		# and it stays there while the frontend is Connected
	xs_is $be/state 5
	xs_is $fe/state 4
	xenstore-write $fe/state 5
	bk_sync
	xs_is $be/state 5
	xenstore-write $fe/state 6
	xs_wait $be/state 6
	xs_absent $be/error
	# every state blkbackd wrote (xensim's record: a Closing over the
	# toolstack's own included, as Linux blkback writes it too)
	be_states_are $DOM 2 4 5 6
	wait_for 5 bk_forgot $DOM || fail "$how: not disconnected: blkbackd holds \"$(bk_holds $DOM)\" of it"
	kill -KILL $HOLD
	wait $HOLD 2>/dev/null || true
done

# online=0 with no frontend at all (a vbd in InitWait): Closing, Closed
add_vbd 99 77 memory:1M
xs_wait "$(bk_be 99 77)/state" 2
xenstore-write "$(bk_be 99 77)/online" 0
xs_wait "$(bk_be 99 77)/state" 6
[ "$(be_states 99 77)" = "2 5 6" ] || fail "no frontend: blkbackd wrote the states \"$(be_states 99 77)\""

# online=0 on a connected guest whose domain dies: Closed without it
frozen_guest
xenstore-write $be/online 0
xs_wait $be/state 5
kill -KILL $HOLD
wait $HOLD 2>/dev/null || true
destroy_domain $DOM
xs_wait $be/state 6
stop_backend
exit 0
