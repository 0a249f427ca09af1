#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A discard through the FUSE export reaches the ring: blkdiscard on the
# loop device over MOUNTPOINT/disk -> fallocate(PUNCH_HOLE) on the FUSE
# file -> BLKIF_OP_DISCARD -> blkbackd punches the hole in the backing
# file.  The export counts it; blkbackd's trace shows op=discard; the
# range reads back as zeros and the backing file is sparse there.  The
# direct export (no ring) punches the hole itself.  With
# discard-enable=0 the export answers EOPNOTSUPP and sends nothing (the
# loop driver then reports success anyway: Linux's loop ignores
# EOPNOTSUPP from fallocate), and the data stays.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_fuse_loop
requires which blkdiscard
front_sim
start_backend
img=$FT/disk.img
head -c $((32 << 20)) /dev/urandom > "$img"	# every block allocated
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
start_export "$FT/mnt" --domid $DOM --timeout 20000 --stats "$FT/stats"
attach_loop "$FT/mnt/disk"
dev=${LOOPDEV#/dev/}
[ "$(cat /sys/block/$dev/queue/discard_max_bytes)" != 0 ] ||
	fail "$LOOPDEV offers no discard over the export"
alloc0=$(stat -c %b "$img")
blkdiscard -o $((4 << 20)) -l $((8 << 20)) "$LOOPDEV" || fail "blkdiscard through the export failed"
sync
grep -E ' op=discard .* status=0$' "$BACKEND_TRACE" >/dev/null ||
	{ grep discard "$BACKEND_TRACE" | head; fail "no successful op=discard in blkbackd's trace"; }
# the range is zeros now, through the stack and in the backing
cmp -n $((8 << 20)) <(dd if="$LOOPDEV" bs=1M skip=4 count=8 iflag=direct status=none) /dev/zero ||
	fail "the discarded range does not read back as zeros through the loop device"
cmp -n $((8 << 20)) <(dd if="$img" bs=1M skip=4 count=8 status=none) /dev/zero ||
	fail "the discarded range is not zeros in the backing file"
alloc1=$(stat -c %b "$img")
[ $(( (alloc0 - alloc1) * 512 )) -ge $((7 << 20)) ] ||
	fail "the backing file did not lose the 8 MiB punched (blocks $alloc0 -> $alloc1)"
# data outside the range is untouched
cmp <(dd if="$LOOPDEV" bs=1M count=4 iflag=direct status=none) <(head -c $((4 << 20)) "$img") ||
	fail "data before the discarded range changed"
stop_export
grep -qx 'discards=[1-9][0-9]*' "$FT/stats" || fail "export stats count no discard: $(cat "$FT/stats")"
detach_loop
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"

# The direct export: the same fallocate punches the hole in PATH.
img2=$FT/direct.img
head -c $((16 << 20)) /dev/urandom > "$img2"
start_export "$FT/mnt2" --direct "$img2" --stats "$FT/stats2"
attach_loop "$FT/mnt2/disk"
blkdiscard -o $((1 << 20)) -l $((4 << 20)) "$LOOPDEV" || fail "blkdiscard through the direct export failed"
cmp -n $((4 << 20)) <(dd if="$img2" bs=1M skip=1 count=4 status=none) /dev/zero ||
	fail "direct export: the range is not zeros in PATH"
detach_loop
stop_export
grep -qx 'discards=[1-9][0-9]*' "$FT/stats2" || fail "direct export stats: $(cat "$FT/stats2")"

# Discard switched off on the vbd: refused, not a silent success.
img3=$FT/nodiscard.img
head -c $((16 << 20)) /dev/urandom > "$img3"
blkfront-test xl-add --domid $DOM --params "$img3" --discard-enable 0 >/dev/null || fail "xl-add --discard-enable 0"
start_export "$FT/mnt3" --domid $DOM --timeout 20000
attach_loop "$FT/mnt3/disk"
n0=$(grep -c ' op=discard ' "$BACKEND_TRACE" || true)
blkdiscard -o 0 -l $((1 << 20)) "$LOOPDEV" 2>"$FT/bd.err" || true
cmp -n $((1 << 20)) "$img3" <(dd if="$LOOPDEV" bs=1M count=1 iflag=direct status=none) ||
	fail "a discard without feature-discard changed the data"
detach_loop
stop_export
[ "$(grep -c ' op=discard ' "$BACKEND_TRACE" || true)" = "$n0" ] ||
	fail "a discard reached the ring of a vbd without feature-discard"
echo ok
