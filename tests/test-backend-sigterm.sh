#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM with I/O in flight loses nothing: blkbackd stops taking
# requests, finishes every request it consumed, answers each one, closes
# the device and exits 0.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
# every host I/O takes 300 ms: SIGTERM certainly finds writes in flight
add_disk $DOM memory:4M,delay-ms=300
{
	for i in $(seq 0 5); do
		echo "fill p$i seed:$((i + 1))"
		echo "send op=write id=$((i + 1)) sector=$((i * 8)) seg=p$i nopush"
	done
	echo "push"
	echo "wait-all status=OKAY timeout=20000"
} > "$BK_TMP/s"
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" > "$BK_TMP/front.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q " id=1 issue=write" "$BACKEND_TRACE" || fail "the writes never reached blkbackd"
grep -q " id=6 host=" "$BACKEND_TRACE" && fail "too late: all writes already done before SIGTERM"
stop_backend
wait $front || { cat "$BK_TMP/front.out"; fail "the frontend did not get OKAY for every write"; }
for i in $(seq 1 6); do
	grep -q " op=write id=$i .*host=mem-write status=0" "$BACKEND_TRACE" ||
		fail "write $i was not done and answered before exit"
done

# the same on a file: every acknowledged write is on the backing
start_backend
guest_with_disk 4M
{
	for i in $(seq 0 7); do
		echo "fill p$i seed:$((i + 11))"
		echo "send op=write id=$((i + 1)) sector=$((i * 16)) seg=p$i seg=p$((i + 8)) nopush"
	done
	echo "push"
	echo "wait-all status=OKAY timeout=20000"
	for i in $(seq 0 7); do echo "dump p$i $BK_TMP/p$i"; done
} > "$BK_TMP/f"
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/f" > "$BK_TMP/front.out" 2>&1 &
front=$!
wait_for 10 grep -q " id=1 issue=write" "$BACKEND_TRACE" || fail "the writes never reached blkbackd"
stop_backend
wait $front || { cat "$BK_TMP/front.out"; fail "the frontend did not get OKAY for every write"; }
for i in $(seq 0 7); do
	cmp "$BK_TMP/p$i" <(dd if="$img" bs=512 skip=$((i * 16)) count=8 status=none) ||
		fail "acknowledged write $i is not on the backing"
done
exit 0
