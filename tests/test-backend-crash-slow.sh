#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The restart soak on a slow store, so that requests are in flight at
# every kill: blkbackd's backing is a loop device (direct I/O) over
# blkfront-test export --direct of a memory store whose every I/O takes
# 3 ms (the store lives in the export's process: it outlives each
# blkbackd).  blkbackd is SIGKILLed and started again 20 times while the
# guest's verify runs (byte-exact, flushes every 20 writes, 2 queues,
# persistent grants, 32 in flight): every kill is a takeover (xensim:
# the successor's pid bound the guest's event channels and maps its
# rings; a xenstore watch: no backend state write before the guest's
# close), and the
# guest ends with 0 I/O errors, 0 verification failures and 0 duplicate
# or unknown responses, and finds nothing of the dead daemons still
# mapped at its close.  verify's last act, on the SIGINT that stops it,
# is a byte-exact read of all its 128 blocks.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_root
requires test -c /dev/fuse
requires losetup --version
KILLS=${BK_SLOW_KILLS:-20}
start_xensim
start_export "$BK_TMP/slow" --direct "memory:16M,delay-ms=3"
attach_loop "$BK_TMP/slow/disk"
start_backend
new_guest
add_disk $DOM "$LOOPDEV"
# (--foreground: our SIGINT reaches verify once, not also through
# timeout's process group)
timeout --foreground 600 blkfront-test verify --domid $DOM --queues 2 --bs 64k --size 8M \
	--count 100000000 --iodepth 32 --flush-every 20 --timeout 30000 \
	> "$BK_TMP/verify.out" 2>&1 &
vpid=$!
cleanup_fn kill $vpid
n=0 inflight=0
# served: xensim shows the guest's rings bound and mapped by the blkbackd
# now running
serving() { served_by $DOM "$(bk_pid)"; }
wait_for 60 serving || fail "no daemon serves the vbd"
# from the guest's connect on, every xenstore change in order
xs_wait "/local/domain/$DOM/device/vbd/51712/state" 4
xs_record "$BK_TMP/watch"
while [ $n -lt "$KILLS" ]; do
	wait_for 60 serving || fail "no daemon serves the vbd after $n kills"
	sleep "$(printf '0.%03d' $((RANDOM % 300 + 100)))"
	kill -0 $vpid 2>/dev/null || { cat "$BK_TMP/verify.out"; fail "the guest stopped after $n kills"; }
	pid=$(cat "$BACKEND_PIDFILE")
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	_backend_running=
	start_backend
	n=$((n + 1))
done
wait_for 60 serving || fail "no daemon serves the vbd after the last kill"
sleep 1
kill -INT $vpid
wait $vpid || { tail -n 20 "$BK_TMP/verify.out"; fail "the guest's verify failed"; }
grep -qE "^verify: ok: [0-9]+ writes acknowledged" "$BK_TMP/verify.out" ||
	{ tail -n 20 "$BK_TMP/verify.out"; fail "the guest's verify did not end ok"; }
verify_read_all "$BK_TMP/verify.out" 128
! grep -E 'still map|leaked' "$BK_TMP/verify.out" ||
	fail "the guest found a dead daemon's mappings at its close"
# every kill a silent takeover: no backend state write between the
# guest's connect and its own close (the frontend's Closing first)
a=$(be_writes_before_fe "$BK_TMP/watch" $DOM)
[ "$a" = 0 ] || fail "$a backend state writes the guest could see before its close"
grep -qx "/local/domain/$DOM/device/vbd/51712/state" "$BK_TMP/watch" ||
	fail "the watch never saw the guest close"
# requests were in flight at the kills: the successors answered some
# again.  Read from blkbackd's log, as only a dead daemon knew which
# requests it had taken (test-backend-crash-soak.sh): whether this store
# is slow enough to test anything, not a verdict on blkbackd.
again=$(grep -c 'taken by the previous blkbackd' "$BACKEND_LOG" || true)
echo "$KILLS kills, $again rings with requests answered again; $(grep '^verify: ok' "$BK_TMP/verify.out")"
[ "$again" -gt 0 ] || fail "no kill found a request in flight: the store is not slow enough to test this"
stop_backend
exit 0
