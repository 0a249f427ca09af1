#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd-ctl upgrade, and a restart (SIGTERM, a new blkbackd), while a
# guest's verify runs (byte-exact, flushes, 2 queues, indirect requests,
# persistent grants): the same pid after an upgrade, each successor takes
# the vbd over (xensim: bound the guest's event channels anew and maps
# its rings), no state change the guest could see until its own close
# (a xenstore watch),
# the verify ends ok (after a byte-exact read of all its 256 blocks, its
# last act on the SIGINT that stops it), and nothing an earlier program
# mapped is still mapped at the guest's close.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim
start_backend
pid=$(cat "$BACKEND_PIDFILE")
guest_with_disk 32M
# (--foreground: our SIGINT reaches verify once, not also through
# timeout's process group)
timeout --foreground 300 blkfront-test verify --domid $DOM --queues 2 --bs 64k --size 16M \
	--count 100000000 --iodepth 16 --flush-every 20 > "$BK_TMP/verify.out" 2>&1 &
vpid=$!
cleanup_fn kill $vpid
xs_wait "$(bk_be $DOM)/state" 4
xs_wait "/local/domain/$DOM/device/vbd/51712/state" 4
# from the guest's connect on, every xenstore change in order
xs_record "$BK_TMP/watch"
wait_for 10 served_by $DOM $pid || fail "the first blkbackd does not serve the vbd"
# each successor binds the guest's event channels anew and maps its
# rings (xensim's tables): after the port changes seen before it (the
# same pid, as exec keeps it, on a new connection to xensim)
for i in 1 2 3 4 5; do
	sleep 0.3
	s0=$(bound_since $DOM)
	blkbackd-ctl upgrade "$abs_top_builddir/backend/blkbackd" >/dev/null || fail "upgrade $i failed"
	wait_for 10 served_by $DOM $pid "$s0" || fail "upgrade $i: no takeover"
	[ "$(cat "$BACKEND_PIDFILE")" = $pid ] || fail "upgrade $i: another process"
done
# a restart: SIGTERM leaves the vbd to the next blkbackd
stop_backend
start_backend
wait_for 10 served_by $DOM "$(bk_pid)" || fail "restart: no takeover"
sleep 0.5
kill -0 $vpid || { cat "$BK_TMP/verify.out"; fail "the guest stopped"; }
kill -INT $vpid
wait $vpid || { tail -n 20 "$BK_TMP/verify.out"; fail "the guest's verify failed"; }
grep -qE "^verify: ok: [0-9]+ writes acknowledged" "$BK_TMP/verify.out" ||
	{ tail -n 20 "$BK_TMP/verify.out"; fail "verify did not end ok"; }
verify_read_all "$BK_TMP/verify.out" 256
! grep -E 'still map|leaked' "$BK_TMP/verify.out" ||
	fail "the guest found an earlier program's mappings at its close"
# no backend state write between the guest's connect and its own close
# (the frontend's Closing first)
n=$(be_writes_before_fe "$BK_TMP/watch" $DOM)
[ "$n" = 0 ] || fail "$n backend state writes the guest could see before its close"
grep -qx "/local/domain/$DOM/device/vbd/51712/state" "$BK_TMP/watch" ||
	fail "the watch never saw the guest close"
stop_backend
exit 0
