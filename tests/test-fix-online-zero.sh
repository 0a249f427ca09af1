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

# the exact transitions blkbackd logged for vbd $1, one per line
transitions() {
	grep -oE "vbd $1/51712: [A-Za-z?]+ -> [A-Za-z]+" "$BACKEND_LOG" | sed 's/.*: //'
}

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
	got=$(transitions $DOM | tr '\n' ',')
	[ "$got" = "? -> InitWait,InitWait -> Connected,Connected -> Closing,Closing -> Closed," ] ||
		fail "$how: transitions $got"
	grep -q "vbd $DOM/51712: disconnected" "$BACKEND_LOG" || fail "$how: not disconnected"
	kill -KILL $HOLD
	wait $HOLD 2>/dev/null || true
done

# online=0 with no frontend at all (a vbd in InitWait): Closing, Closed
add_vbd 99 77 memory:1M
xs_wait "$(bk_be 99 77)/state" 2
xenstore-write "$(bk_be 99 77)/online" 0
xs_wait "$(bk_be 99 77)/state" 6
got=$(grep -oE "vbd 99/77: [A-Za-z?]+ -> [A-Za-z]+" "$BACKEND_LOG" | sed 's/.*: //' | tr '\n' ',')
[ "$got" = "? -> InitWait,InitWait -> Closing,Closing -> Closed," ] || fail "no frontend: transitions $got"

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
