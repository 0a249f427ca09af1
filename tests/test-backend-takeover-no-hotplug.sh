#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd made without a hotplug script (no hotplug-status, as README's
# walk-through makes one by hand) is taken over by the next blkbackd
# like any other it served: its recovery record proves the ring its own.
# Seen from outside: xensim shows the successor's pid on the guest's
# rings, a xenstore watch shows no backend state write before the
# guest's own close (blkbackd wrote InitWait under the Connected guest
# and connected it from scratch), and the guest's verify is byte-exact
# to the last block.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 16M
new_guest
add_disk $DOM "$params" --no-hotplug
be=$(bk_be $DOM)
xs_absent $be/hotplug-status
timeout --foreground 300 blkfront-test verify --domid $DOM --queues 2 --bs 64k --size 8M \
	--count 100000000 --iodepth 8 --flush-every 20 --timeout 120000 \
	> "$BK_TMP/verify.out" 2>&1 &
vpid=$!
cleanup_fn kill $vpid
xs_wait /local/domain/$DOM/device/vbd/51712/state 4
wait_for 30 served_by $DOM "$(bk_pid)" || fail "blkbackd does not serve the vbd"
xs_record "$BK_TMP/watch"
for sig in TERM KILL; do
	pid=$(bk_pid)
	kill -$sig $pid
	wait $pid 2>/dev/null || true	# reaped: its instance lock is free
	_backend_running=
	start_backend
	wait_for 30 served_by $DOM "$(bk_pid)" ||
		fail "after SIG$sig: the successor did not take the vbd over"
done
verify_stop $vpid "$BK_TMP/verify.out" 128
n=$(be_writes_before_fe "$BK_TMP/watch" $DOM)
[ "$n" = 0 ] || fail "$n backend state writes under the Connected guest"
stop_backend
exit 0
