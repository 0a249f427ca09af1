#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bonnie++ on ext4 over the FUSE export (a loop device on the guest's
# disk) while blkbackd is SIGKILLed and started again 20 times: the
# filesystem's writes, reads and flushes wait through every restart and
# never fail.  Ends with bonnie++ done, 0 I/O errors at the export,
# e2fsck -fn clean, every kill a takeover (xensim: the successor's pid
# bound the guest's event channels and maps its rings), no state change
# the guest could see (a xenstore watch), and nothing of the dead daemons still mapped at the close.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_fuse_loop
requires which bonnie++
KILLS=${BK_BONNIE_KILLS:-20}
front_sim
start_backend
img=$FT/disk.img
truncate -s 256M "$img"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
start_export "$FT/mnt" --domid $DOM --queues 2 --timeout 20000 --stats "$FT/stats"
attach_loop "$FT/mnt/disk"
mkfs.ext4 -q -F -E nodiscard "$LOOPDEV" || fail "mkfs.ext4"
mkdir -p "$FT/fs"
mount -t ext4 "$LOOPDEV" "$FT/fs" || fail "mount"
umount_at_exit "$FT/fs"
mkdir "$FT/fs/bonnie"
# bonnie++ over and over until the kills are done (one run may be shorter)
( while [ ! -e "$FT/stop" ]; do
	bonnie++ -d "$FT/fs/bonnie" -s 64 -r 32 -n 1 -u root -q -m blkfront >>"$FT/bonnie.csv" 2>"$FT/bonnie.err" ||
		{ cat "$FT/bonnie.err"; echo failed > "$FT/bonnie.failed"; exit 1; }
  done ) &
bpid=$!
cleanup_fn kill $bpid
n=0
# served: xensim shows the guest's rings bound and mapped by the blkbackd
# now running
serving() { served_by $DOM "$(bk_pid)"; }
wait_for 30 serving || fail "no daemon serves the vbd"
# from here on, every xenstore change in order
xs_record "$FT/watch"
while [ $n -lt "$KILLS" ]; do
	wait_for 30 serving || fail "no daemon serves the vbd after $n kills"
	sleep "$(printf '0.%03d' $((RANDOM % 500)))"
	[ ! -e "$FT/bonnie.failed" ] || fail "bonnie++ failed after $n kills"
	pid=$(cat "$BACKEND_PIDFILE")
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	_backend_running=
	start_backend
	n=$((n + 1))
done
wait_for 30 serving || fail "no daemon serves the vbd after the last kill"
touch "$FT/stop"
wait $bpid || fail "bonnie++ failed: $(cat "$FT/bonnie.err" 2>/dev/null)"
grep -c ',blkfront,' "$FT/bonnie.csv" | grep -qv '^0$' || fail "no bonnie++ run completed"
echo "bonnie++ runs: $(grep -c ',blkfront,' "$FT/bonnie.csv")"
umount "$FT/fs" || fail "umount"
losetup -d "$LOOPDEV" || fail "losetup -d"
# The export closes the vbd.  xensim released each SIGKILLed daemon's
# grant pins when it died (its pin ledger, as gntdev unmaps a dead
# process's grants on Xen), so the strict frontend finds no ring or
# persistent page still mapped at Closed, ends access to every one and
# logs no error at all.
_export_running=
kill -TERM "$EXPORT_PID"
wait_for 60 sh -c "! kill -0 $EXPORT_PID 2>/dev/null" || fail "the export did not exit"
wait "$EXPORT_PID" 2>/dev/null || true
! mountpoint -q "$FT/mnt" || fail "$FT/mnt is still mounted"
grep -E 'error|still map|leaked' "$FT/export.log" &&
	fail "the export logged errors (a dead daemon's mapping left behind?)"
cat "$FT/stats"
grep -qx "errors=0" "$FT/stats" || fail "the export saw I/O errors"
# every kill a silent takeover: no backend state write between the
# export's connect and its close (the frontend's Closing first)
a=$(be_writes_before_fe "$FT/watch" $DOM)
[ "$a" = 0 ] || fail "$a backend state writes the guest could see before its close"
grep -qx "/local/domain/$DOM/device/vbd/51712/state" "$FT/watch" ||
	fail "the watch never saw the export close"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
e2fsck -fn "$img" >"$FT/fsck" 2>&1 || { cat "$FT/fsck"; fail "e2fsck -fn is not clean"; }
stop_backend
exit 0
