#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C28: one stuck vbd.  vbd A is a loop device on a FUSE file whose
# daemon is stopped (a backing that truly hangs, as a dead NFS server):
# A's ring is full -- a FLUSH stuck in fdatasync and 31 writes.
# Meanwhile vbds B and C (files) keep doing 4 KiB random reads and
# writes with a flush every 8: p99 under 50 ms, every flush completes;
# a new vbd D is added and reaches Connected.  Then A's backing comes
# back: every request of A gets exactly one response (the script fails
# on a missing, duplicate or unknown one).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
# Under valgrind a thread blocked in io_submit (A's writes, once the loop
# device's queue is full) stops every thread: valgrind runs one thread at
# a time and does not count io_submit as a syscall that may block.  What
# this test asserts -- the other vbds carry on -- cannot hold there.
[ "${BLK_VALGRIND:-}" = 1 ] && { echo "$0: skipped: valgrind serialises threads across a blocking io_submit"; exit 77; }
requires_root
requires test -c /dev/fuse
requires losetup --version
start_sim_backend

hung=$BK_TMP/hung.img
truncate -s 8M "$hung"
start_export "$BK_TMP/mnt" --direct "$hung"
attach_loop "$BK_TMP/mnt/disk"
dev=$LOOPDEV
cleanup_fn kill -CONT "$EXPORT_PID"	# never leave it stopped (runs first)

new_guest; A=$DOM
add_disk $A "$dev"
{
	echo "xs-expect fe go 1 timeout=30000"
	# the flush first: issued at once (a FLUSH does not wait for the
	# writes), it sits in fdatasync; the writes behind it fill the ring
	# (and block the queue thread in io_submit once the loop device's
	# queue is full)
	echo "send op=flush id=32 nr_segments=0 nopush"
	for i in $(seq 1 31); do
		echo "fill p$i seed:$i"
		echo "send op=write id=$i sector=$((i * 8)) seg=p$i nopush"
	done
	echo "push"
	echo "wait-all status=OKAY timeout=120000"
	for i in 1 31; do
		echo "send op=read id=$((100 + i)) sector=$((i * 8)) seg=p100 expect=OKAY"
		echo "check p100 seed:$i"
	done
} > "$BK_TMP/a"
blkfront-test script --domid $A --max-indirect 16 "$BK_TMP/a" > "$BK_TMP/a.out" 2>&1 &
fa=$!
cleanup_fn kill $fa
xs_wait "$(bk_be $A)/state" 4
kill -STOP "$EXPORT_PID"
xenstore-write /local/domain/$A/device/vbd/51712/go 1
wait_for 10 grep -q "vbd=$A/51712 ring=0 id=32 issue=flush" "$BACKEND_TRACE" ||
	fail "A's flush never reached the backing"
sleep 0.5
grep -q "vbd=$A/51712 ring=0 op=" "$BACKEND_TRACE" && fail "A answered although its backing hangs"

# B and C: 4 KiB I/O with flushes, 5 s each, at once
for g in B C; do
	new_guest; eval $g=$DOM
	truncate -s 64M "$BK_TMP/$g.img"
	add_disk $DOM "$BK_TMP/$g.img"
	blkfront-test io --domid $DOM --rw randrw --bs 4k --iodepth 1 --runtime 5 \
		--flush-every 8 --size 64M --output-format json > "$BK_TMP/$g.json" 2> "$BK_TMP/$g.err" &
	eval f$g=$!
done
cleanup_fn kill $fB $fC
# D, added while A hangs
new_guest; D=$DOM
t0=$EPOCHREALTIME
add_disk $D memory:1M
io_works $D
echo "D: Connected and I/O done $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { printf "%.2f", b - a }') s after xl-add"
for g in B C; do
	eval "wait \$f$g" || { cat "$BK_TMP/$g.err"; fail "$g's I/O failed"; }
	p99=$(sed -n 's/.*"p99":\([0-9.]*\).*/\1/p' "$BK_TMP/$g.json")
	flushes=$(sed -n 's/.*"flushes":\([0-9]*\).*/\1/p' "$BK_TMP/$g.json")
	errors=$(sed -n 's/.*"errors":\([0-9]*\).*/\1/p' "$BK_TMP/$g.json")
	echo "$g: p99 $p99 us, $flushes flushes, $errors errors"
	awk -v p="$p99" 'BEGIN { exit !(p != "" && p < 50000) }' || fail "$g: p99 $p99 us"
	[ "${flushes:-0}" -gt 0 ] && [ "$errors" = 0 ] || fail "$g: flushes $flushes errors $errors"
done
grep -q "vbd=$A/51712 ring=0 op=" "$BACKEND_TRACE" && fail "A answered although its backing hangs"

# A's backing comes back
kill -CONT "$EXPORT_PID"
wait $fa || { cat "$BK_TMP/a.out"; fail "A's requests were not all answered exactly once, OKAY"; }
for i in $(seq 1 32); do
	[ "$(grep -c "vbd=$A/51712 ring=0 op=[a-z]* id=$i .*status=" "$BACKEND_TRACE")" = 1 ] ||
		fail "A's request $i: not exactly one response"
done
stop_backend
losetup -d "$dev" || fail "losetup -d $dev"
stop_export
exit 0
