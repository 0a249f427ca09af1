#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# README "done when": xensim + blkbackd + blkfront-test export, mkfs.ext4
# on a loop device over the exported disk, mount, real bonnie++ inside
# (small sizes), umount, fsck clean.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_fuse_loop
requires which bonnie++
front_sim
start_backend
img=$FT/disk.img
truncate -s 256M "$img"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
start_export "$FT/mnt" --domid $DOM --timeout 30000 --stats "$FT/stats"
attach_loop "$FT/mnt/disk"
mkfs.ext4 -q -F -E nodiscard "$LOOPDEV" || fail "mkfs.ext4"
mkdir -p "$FT/fs"
mount -t ext4 "$LOOPDEV" "$FT/fs" || fail "mount"
umount_at_exit "$FT/fs"
mkdir "$FT/fs/bonnie"
# 64 MiB of block I/O (-r 32 says RAM is 32 MiB), 1024 files, CSV on stdout
bonnie++ -d "$FT/fs/bonnie" -s 64 -r 32 -n 1 -u root -q -m blkfront >"$FT/bonnie.csv" 2>"$FT/bonnie.err" ||
	{ cat "$FT/bonnie.err"; fail "bonnie++ failed"; }
cat "$FT/bonnie.csv"
# a CSV line: format version, bonnie version, name, ... (bon_csv2txt's input)
grep -q ',blkfront,' "$FT/bonnie.csv" || fail "no bonnie++ CSV line"
umount "$FT/fs" || fail "umount"
losetup -d "$LOOPDEV" || fail "losetup -d"
stop_export
cat "$FT/stats"
grep -qx "errors=0" "$FT/stats" || fail "the export saw I/O errors"
grep -q "^flushes=[1-9]" "$FT/stats" || fail "bonnie++ on ext4 sent no flush"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
e2fsck -fn "$img" >"$FT/fsck" 2>&1 || { cat "$FT/fsck"; fail "e2fsck -fn is not clean"; }
stop_backend
exit 0
