#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real filesystem on the FUSE export: xensim + blkbackd (file store) +
# blkfront-test export (2 queues) + loop (--direct-io=on) + mkfs.ext4 + mount; files
# written and fsync'ed; an application's fsync() reaches blkbackd as
# FLUSH_DISKCACHE requests (counted in its trace), none with nobarrier;
# umount, clean export shutdown, e2fsck -fn clean on the backing file.
# A mount point that is not a directory is refused.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_fuse_loop
front_sim
start_backend
img=$FT/disk.img
truncate -s 64M "$img"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
# a mount point that is a file is refused (FUSE would mount over it and
# make it unreadable to everyone), before the device is connected
echo precious > "$FT/file"
rc=0; blkfront-test export --domid $DOM "$FT/file" 2>"$FT/err" || rc=$?
[ $rc = 1 ] && grep -qF "export: $FT/file: not a directory (the disk is served as MOUNTPOINT/disk)" "$FT/err" ||
	fail "export on a file: rc $rc, $(cat "$FT/err")"
[ "$(cat "$FT/file")" = precious ] || fail "the file is not readable after a refused export"
! grep -q " $FT/file " /proc/mounts || fail "export mounted over a file"
xs_wait "$(bk_be $DOM)/state" 2
# two queues of two pages: FUSE's threads spread over both rings
start_export "$FT/mnt" --domid $DOM --timeout 20000 --stats "$FT/stats" --queues 2 --ring-order 1
[ "$(stat -c %s "$FT/mnt/disk")" = $((64 << 20)) ] || fail "export size: $(stat -c %s "$FT/mnt/disk")"
attach_loop "$FT/mnt/disk"
mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV" ||
	fail "mkfs.ext4 through the export failed"
mkdir -p "$FT/fs"
mount -t ext4 -o barrier=1 "$LOOPDEV" "$FT/fs" || fail "mount"
umount_at_exit "$FT/fs"

# some files, then their content read back after a remount
for i in 1 2 3 4; do
	head -c $((i * 300000)) /dev/urandom > "$FT/f$i"
	cp "$FT/f$i" "$FT/fs/f$i"
done
sync

flushes() { grep -cE ' op=flush .* status=0$' "$BACKEND_TRACE" || true; }
fsyncs() { # N: N appends of 4 KiB, each followed by fsync()
	python3 - "$FT/fs/app.log" "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(int(sys.argv[2])):
    os.write(fd, os.urandom(4096))
    os.fsync(fd)
os.close(fd)
PY
}
sleep 1	# let the journal settle
n0=$(flushes)
fsyncs 20
n1=$(flushes)
per=$(( (n1 - n0) ))
echo "barrier=1: 20 fsync() -> $per FLUSH_DISKCACHE requests"
# ext4 (data=ordered) commits each fsync with a pre-flush and a FUA commit
# block; loop has no FUA, so the block layer turns it into a post-flush,
# and both reach the export as fsync() of the file: 2 flushes per fsync.
[ "$per" -ge 40 ] && [ "$per" -le 44 ] ||
	fail "expected about 2 flushes per fsync (40..44 for 20), got $per"

mount -o remount,barrier=0 "$FT/fs" || fail "remount nobarrier"
sleep 1
n2=$(flushes)
fsyncs 20
n3=$(flushes)
echo "barrier=0: 20 fsync() -> $((n3 - n2)) FLUSH_DISKCACHE requests"
[ "$n3" = "$n2" ] || fail "nobarrier: expected no flush, got $((n3 - n2))"
mount -o remount,barrier=1 "$FT/fs" || fail "remount barrier"

umount "$FT/fs" || fail "umount"
mount -t ext4 -o ro "$LOOPDEV" "$FT/fs" || fail "ro mount"
for i in 1 2 3 4; do
	cmp "$FT/f$i" "$FT/fs/f$i" || fail "f$i differs after remount"
done
umount "$FT/fs" || fail "umount (ro)"
losetup -d "$LOOPDEV" || fail "losetup -d"
stop_export
# the export's own counters agree with blkbackd's trace
grep -qx "flushes=$(flushes)" "$FT/stats" || fail "export stats: $(cat "$FT/stats"), trace: $(flushes) flushes"
grep -qx "errors=0" "$FT/stats" || fail "export saw errors: $(cat "$FT/stats")"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
e2fsck -fn "$img" >"$FT/fsck" 2>&1 || { cat "$FT/fsck"; fail "e2fsck -fn is not clean"; }
for r in 0 1; do
	grep -q "ring=$r op=write" "$BACKEND_TRACE" || fail "no write went through ring $r"
done
stop_backend
exit 0
