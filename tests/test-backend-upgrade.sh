#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd-ctl upgrade, and a restart (SIGTERM, a new blkbackd), while a
# guest's verify runs (byte-exact, flushes, 2 queues, indirect requests,
# persistent grants): the same pid after an upgrade, each successor takes
# the vbd over, no state change the guest could see until its own close,
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
takeovers() { grep -c "vbd $DOM/51712: taken over, Connected as it was" "$BACKEND_LOG"; }
for i in 1 2 3 4 5; do
	sleep 0.3
	blkbackd-ctl upgrade "$abs_top_builddir/backend/blkbackd" >/dev/null || fail "upgrade $i failed"
	wait_for 10 eval '[ "$(takeovers)" = $i ]' || fail "upgrade $i: no takeover"
	[ "$(cat "$BACKEND_PIDFILE")" = $pid ] || fail "upgrade $i: another process"
done
# a restart: SIGTERM leaves the vbd to the next blkbackd
stop_backend
start_backend
wait_for 10 eval '[ "$(takeovers)" = 6 ]' || fail "restart: no takeover"
sleep 0.5
kill -0 $vpid || { cat "$BK_TMP/verify.out"; fail "the guest stopped"; }
kill -INT $vpid
wait $vpid || { tail -n 20 "$BK_TMP/verify.out"; fail "the guest's verify failed"; }
grep -qE "^verify: ok: [0-9]+ writes acknowledged" "$BK_TMP/verify.out" ||
	{ tail -n 20 "$BK_TMP/verify.out"; fail "verify did not end ok"; }
verify_read_all "$BK_TMP/verify.out" 256
! grep -E 'still map|leaked' "$BK_TMP/verify.out" ||
	fail "the guest found an earlier program's mappings at its close"
[ "$(log_lines | grep -E "vbd $DOM/51712: .* -> " | sed 's/ (.*//')" = \
  "$(printf '%s\n' "blkbackd: vbd $DOM/51712: ? -> InitWait" \
		   "blkbackd: vbd $DOM/51712: InitWait -> Connected" \
		   "blkbackd: vbd $DOM/51712: Connected -> Closing" \
		   "blkbackd: vbd $DOM/51712: Closing -> Closed")" ] ||
	fail "a state change the guest could see: $(grep -E -- ' -> ' "$BACKEND_LOG")"
stop_backend
exit 0
