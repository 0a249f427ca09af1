#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A blkbackd killed at each point of a request's life (--test-crash-at:
# a request recorded and not yet acted on; a response in the ring, not
# yet recorded; recorded, not yet pushed; pushed, its record not yet
# freed) is replaced by one that takes the vbd over as it stands: no
# xenstore write the guest could see (both state nodes stay 4, no
# InitWait, no Closing), the guest's event channel bound again, and every
# request answered exactly once -- the guest's verify (byte-exact, with
# flushes, indirect requests, 2 queues, persistent grants) would fail on
# a duplicate, an unknown id, a lost answer or wrong data, and nothing
# the killed daemon mapped is still mapped at the guest's close.  Seen
# from outside blkbackd: xensim's tables (the successor's pid bound the
# guest's event channels and maps its rings), a xenstore watch (no
# backend state write before the guest's own close) and the guest.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim

# gone, or a zombie (killed, not yet reaped)
died() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

for point in taken responded recorded pushed; do
	: > "$BACKEND_LOG"
	start_backend --test-crash-at=$point:40
	pid=$(cat "$BACKEND_PIDFILE")
	guest_with_disk 16M
	be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
	# (a response may wait for the successor's start: 30 s, blkfront-test's
	# default, is too short for a valgrind blkbackd on a busy machine)
	timeout 300 blkfront-test verify --domid $DOM --queues 2 --bs 64k --size 8M \
		--count 400 --iodepth 8 --flush-every 20 --timeout 120000 \
		> "$BK_TMP/verify.out" 2>&1 &
	vpid=$!
	cleanup_fn kill $vpid
	wait_for 30 died $pid || fail "$point: blkbackd did not die at its crash point"
	wait $pid 2>/dev/null || true	# reaped: its instance lock is free
	_backend_running=
	xs_is "$be/state" 4
	# every xenstore change from now on, in order: what the guest sees
	xs_record "$BK_TMP/watch.$point"
	# the successor: same vbd, no crash point; the guest stopped
	# meanwhile, so that it cannot finish and close before xensim is asked
	guest=$(ps -o pid= --ppid $vpid | tr -d ' ')	# blkfront-test, timeout's child
	[ -n "$guest" ] || fail "$point: the guest's verify is gone"
	kill -STOP $guest
	start_backend
	wait_for 30 served_by $DOM "$(bk_pid)" ||
		fail "$point: the successor did not take the vbd over (xensim: $(xensim-ctl evtchn 0 | tr '\n' ';'))"
	kill -CONT $guest
	wait $vpid || { cat "$BK_TMP/verify.out"; fail "$point: the guest's verify failed"; }
	grep -q "^verify: ok: 400 writes acknowledged" "$BK_TMP/verify.out" ||
		{ cat "$BK_TMP/verify.out"; fail "$point: verify did not say ok"; }
	verify_read_all "$BK_TMP/verify.out" 128 "$point"
	! grep -E 'still map|leaked' "$BK_TMP/verify.out" ||
		fail "$point: the guest found the killed daemon's mappings at its close"
	# no backend state write before the guest's own close (verify's
	# close: the frontend's Closing comes first); the guest had every
	# request answered exactly once (verify fails on a lost, duplicate
	# or unknown answer), the one killed with included
	n=$(be_writes_before_fe "$BK_TMP/watch.$point" $DOM)
	[ "$n" = 0 ] || fail "$point: $n backend state writes before the guest closed"
	grep -q "^/local/domain/$DOM/device/vbd/51712/state\$" "$BK_TMP/watch.$point" ||
		fail "$point: the watch never saw the guest close"
	# (for a human reading a failure: what blkbackd says it answered again)
	grep -E "vbd $DOM/51712 ring [01]: [0-9]+ requests? taken by the previous blkbackd" \
		"$BACKEND_LOG" || echo "$point: the log names no request answered again"
	stop_backend
done
exit 0
