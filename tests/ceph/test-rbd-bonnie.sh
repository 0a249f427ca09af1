#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ext4 on RBD: blkfront-test export (FUSE) of a vbd on an RBD image, a
# loop device over it, mkfs.ext4, real bonnie++ inside (small sizes),
# umount, then e2fsck -fn on the image itself (rbd export): clean.  Run
# by check-ceph.sh (as tests/test-front-bonnie.sh does on a file).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
requires_fuse_loop
requires which bonnie++
front_sim
start_backend
new_disk 256M
blkfront-test xl-add --domid $DOM --params "$params" >/dev/null || fail "xl-add"
start_export "$FT/mnt" --domid $DOM --timeout 30000 --stats "$FT/stats"
attach_loop "$FT/mnt/disk"
mkfs.ext4 -q -F -E nodiscard "$LOOPDEV" || fail "mkfs.ext4"
mkdir -p "$FT/fs"
mount -t ext4 "$LOOPDEV" "$FT/fs" || fail "mount"
umount_at_exit "$FT/fs"
mkdir "$FT/fs/bonnie"
bonnie++ -d "$FT/fs/bonnie" -s 64 -r 32 -n 1 -u root -q -m blkfront-rbd >"$FT/bonnie.csv" 2>"$FT/bonnie.err" ||
	{ cat "$FT/bonnie.err"; fail "bonnie++ failed"; }
cat "$FT/bonnie.csv"
grep -q ',blkfront-rbd,' "$FT/bonnie.csv" || fail "no bonnie++ CSV line"
umount "$FT/fs" || fail "umount"
losetup -d "$LOOPDEV" || fail "losetup -d"
stop_export
cat "$FT/stats"
grep -qx "errors=0" "$FT/stats" || fail "the export saw I/O errors"
grep -q "^flushes=[1-9]" "$FT/stats" || fail "bonnie++ on ext4 sent no flush"
grep -q "host=rbd_aio_flush status=0" "$BACKEND_TRACE" || fail "no flush reached librbd"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" "$FT/image" || fail "rbd export"
e2fsck -fn "$FT/image" >"$FT/fsck" 2>&1 || { cat "$FT/fsck"; fail "e2fsck -fn is not clean"; }
stop_backend
exit 0
