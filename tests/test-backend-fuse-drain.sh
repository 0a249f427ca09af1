#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A backing that hangs (like a dead NFS server): vbd A is a loop device
# on a FUSE file whose daemon (blkfront-test export --direct) is stopped
# (SIGSTOP) with 3 of A's writes in flight, and A's frontend closes.
# While A cannot drain: A is Closing at once, another vbd connects and
# serves, and vbd B on the same loop device waits (no InitWait) instead
# of writing beside A.  Once the daemon runs again (SIGCONT) A answers
# every write OKAY, then B probes, connects and reads A's data back.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_root
requires test -c /dev/fuse
requires losetup --version
start_sim_backend
N=3

hung=$BK_TMP/hung.img
truncate -s 8M "$hung"
start_export "$BK_TMP/mnt" --direct "$hung"
attach_loop "$BK_TMP/mnt/disk"
dev=$LOOPDEV
cleanup_fn kill -CONT "$EXPORT_PID"	# never leave it stopped (runs first)

new_guest; A=$DOM
fe=/local/domain/$A/device/vbd/51712
add_disk $A "$dev"
{
	echo "xs-expect fe go 1 timeout=30000"
	for i in $(seq 1 $N); do
		echo "fill p$i seed:$i"
		echo "send op=write id=$i sector=$((i * 8)) seg=p$i nopush"
	done
	echo "push"
	echo "wait-all status=OKAY timeout=60000"
} > "$BK_TMP/a"
blkfront-test script --domid $A --max-indirect 16 "$BK_TMP/a" > "$BK_TMP/a.out" 2>&1 &
front=$!
cleanup_fn kill $front
xs_wait "$(bk_be $A)/state" 4

kill -STOP "$EXPORT_PID"
xenstore-write $fe/go 1
wait_for 10 grep -q "vbd=$A/51712 ring=0 id=$N issue=write" "$BACKEND_TRACE" ||
	fail "A's writes never reached blkbackd"
sleep 0.3
grep -q "vbd=$A/51712 ring=0 op=write " "$BACKEND_TRACE" &&
	fail "a write was answered although the backing hangs"

# A's frontend closes: Closing at once, although nothing can drain
xenstore-write $fe/state 5
xs_wait "$(bk_be $A)/state" 5 5
# another vbd connects and serves meanwhile: it completes while A's
# backing is stopped (liveness by order; A is checked still hung below)
good_device_works memory:1M
# B on A's loop device waits for A: no InitWait yet
new_guest; B=$DOM
add_disk $B "$dev"
# whatever blkbackd does on B's addition, it has done it after bk_sync:
# B must still wait (Initialising)
bk_sync
xs_is "$(bk_be $B)/state" 1
# (for a human: blkbackd's reason)
grep "vbd $B/51712: " "$BACKEND_LOG" || true
grep -q "vbd=$A/51712 ring=0 op=write " "$BACKEND_TRACE" && fail "the backing did not hang"

# the backing comes back: A drains, answers, and B goes on
kill -CONT "$EXPORT_PID"
wait $front || { cat "$BK_TMP/a.out"; fail "A's frontend did not get OKAY for every write"; }
writes_answered $A $N || fail "A's writes were not all answered OKAY"
xs_wait "$(bk_be $A)/state" 6
xs_wait "$(bk_be $B)/state" 2 10
{
	for i in $(seq 1 $N); do
		echo "send op=read sector=$((i * 8)) seg=p$i expect=OKAY"
		echo "check p$i seed:$i"
	done
	echo "fill p10 seed:42"
	echo "send op=write sector=64 seg=p10 expect=OKAY"
	echo "send op=read sector=64 seg=p11 expect=OKAY"
	echo "check p11 seed:42"
} > "$BK_TMP/b"
run_script $B "$BK_TMP/b"
xs_wait "$(bk_be $B)/state" 6

stop_backend
losetup -d "$dev" || fail "losetup -d $dev"
stop_export
exit 0
