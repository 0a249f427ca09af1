#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# export --direct: the same FUSE export over a file with no ring (the
# benchmark's dom0 row): ext4 on loop on it is fsck-clean; fsync() becomes
# fdatasync() of the file in writeback mode (counted), nothing in
# writethrough mode (the file is O_DSYNC).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_fuse_loop
img=$FT/disk.img
truncate -s 64M "$img"
for cache in writeback writethrough; do
	start_export "$FT/mnt" --direct "$img" --cache $cache --stats "$FT/stats.$cache"
	attach_loop "$FT/mnt/disk"
	if [ $cache = writeback ]; then
		mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV" || fail "mkfs"
	fi
	mkdir -p "$FT/fs"
	mount -t ext4 "$LOOPDEV" "$FT/fs" || fail "mount ($cache)"
	umount_at_exit "$FT/fs"
	head -c 1000000 /dev/urandom > "$FT/f.$cache"
	cp "$FT/f.$cache" "$FT/fs/f.$cache"
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
for i in range(10):
    os.write(fd, b"x" * 4096); os.fsync(fd)
' "$FT/fs/app"
	umount "$FT/fs" || fail "umount"
	losetup -d "$LOOPDEV" || fail "losetup -d"
	stop_export
	cat "$FT/stats.$cache"
	fl=$(sed -n 's/^flushes=//p' "$FT/stats.$cache")
	[ "$fl" -ge 20 ] || fail "$cache: $fl fsync()s reached the export, expected >= 20"
	e2fsck -fn "$img" >"$FT/fsck" 2>&1 || { cat "$FT/fsck"; fail "$cache: e2fsck -fn not clean"; }
done
# both files are there
start_export "$FT/mnt" --direct "$img"
attach_loop "$FT/mnt/disk"
mount -t ext4 -o ro "$LOOPDEV" "$FT/fs" || fail "ro mount"
cmp "$FT/f.writeback" "$FT/fs/f.writeback" || fail "writeback file differs"
cmp "$FT/f.writethrough" "$FT/fs/f.writethrough" || fail "writethrough file differs"
umount "$FT/fs"
losetup -d "$LOOPDEV"
stop_export

# 16 threads x 1 MiB O_DIRECT reads: one FUSE read each, 8 requests of
# 128 KiB, 128 wanted at once against 32 slots
head -c 64M /dev/urandom > "$FT/rnd"
cp "$FT/rnd" "$FT/rnd.ref"
start_export "$FT/mnt" --direct "$FT/rnd" --stats "$FT/stats.rnd"
timeout -k 10 120 python3 - "$FT/mnt/disk" "$FT/rnd.ref" <<'EOF' || fail "concurrent 1 MiB reads"
import mmap, os, random, sys, threading
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
ref = open(sys.argv[2], "rb").read()
bad = []
def reader(seed):
    r = random.Random(seed)
    buf = mmap.mmap(-1, 1 << 20)
    for _ in range(100):
        off = r.randrange(64) << 20
        n = os.preadv(fd, [buf], off)
        if n != 1 << 20 or buf[:] != ref[off:off + n]:
            bad.append((off, n))
ts = [threading.Thread(target=reader, args=(i,)) for i in range(16)]
for t in ts:
    t.start()
for t in ts:
    t.join()
if bad:
    sys.exit("%d of 1600 reads differ, first at %d (%d bytes)" % (len(bad), *bad[0]))
EOF
stop_export
grep -qx 'reads=1600' "$FT/stats.rnd" || { cat "$FT/stats.rnd"; fail "expected 1600 reads of 1 MiB"; }
exit 0
