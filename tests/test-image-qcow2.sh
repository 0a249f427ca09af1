#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A qcow2 disk through the hotplug script (params qcow2:PATH, issue #30):
# a two-level backing chain (base <- mid <- top) attached libxl's way --
# blkbackd reaches InitWait without the image, then block-blkbackd "add"
# starts a qemu-storage-daemon for it and writes its socket to
# image-socket, and blkbackd connects through its nbd store.  From
# outside blkbackd:
#  - the guest reads the whole disk (blkfront-test export: FUSE over the
#    ring) byte-exact against `qemu-img convert -O raw` of the same image;
#  - the guest writes (1 MiB over data from all three layers, 4 KiB at
#    the last page) and flushes (fsync), and reads them back;
#  - "remove" after libxl's detach stops the daemon (process, socket and
#    pid file gone); `qemu-img check` finds top clean, its conversion is
#    the old one with exactly the guest's writes in it, and base and mid
#    are untouched (writes go to the top layer);
#  - mode=r: the daemon's export is read-only, a guest write gets ERROR,
#    the image is unchanged.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
. "$abs_top_srcdir/tests/lib-image.sh"
image_requires
requires_root
requires test -c /dev/fuse
start_sim_backend

q=$BK_TMP
qcow2_chain "$q"
lower_sums=$(cat "$q/base.qcow2" "$q/mid.qcow2" | md5sum)

new_guest
image_add $DOM "qcow2:$q/top.qcow2"
# the daemon is the script's, not blkbackd's: no child of it
[ "$(awk '{ print $4 }' /proc/$IMAGE_PID/stat)" != "$(bk_pid)" ] ||
	fail "qemu-storage-daemon is blkbackd's child"
start_export "$q/mnt" --domid $DOM --max-indirect 16
xs_is "$be/state" 4
cmp "$q/mnt/disk" "$q/want.raw" || fail "the guest's disk is not qemu-img convert's raw image"

head -c 1M /dev/urandom > "$q/blob"
head -c 4096 /dev/urandom > "$q/tail"
dd if="$q/blob" of="$q/mnt/disk" bs=64k seek=$(( (3 << 20) + (512 << 10) )) oflag=seek_bytes \
	conv=notrunc,fsync status=none || fail "guest write 1"
dd if="$q/tail" of="$q/mnt/disk" bs=4096 seek=$(( (16 << 20) / 4096 - 1 )) \
	conv=notrunc,fsync status=none || fail "guest write 2"
cp "$q/want.raw" "$q/want2.raw"
dd if="$q/blob" of="$q/want2.raw" bs=64k seek=$(( (3 << 20) + (512 << 10) )) oflag=seek_bytes \
	conv=notrunc status=none
dd if="$q/tail" of="$q/want2.raw" bs=4096 seek=$(( (16 << 20) / 4096 - 1 )) conv=notrunc status=none
cmp "$q/mnt/disk" "$q/want2.raw" || fail "the guest does not read back what it wrote"
grep -q "op=flush .*host=nbd_aio_flush status=0" "$BACKEND_TRACE" ||
	fail "no flush reached the image's daemon"
stop_export

image_remove $DOM
qemu-img check -q "$q/top.qcow2" || fail "qemu-img check: top.qcow2 is not clean"
qemu-img convert -O raw "$q/top.qcow2" "$q/got.raw" || fail "qemu-img convert after"
cmp "$q/got.raw" "$q/want2.raw" || fail "top.qcow2 does not hold exactly the guest's writes"
[ "$(cat "$q/base.qcow2" "$q/mid.qcow2" | md5sum)" = "$lower_sums" ] ||
	fail "a backing file changed: writes must go to the top layer only"
[ -z "$(image_daemons)" ] || fail "a qemu-storage-daemon is left: $(image_daemons)"

# mode=r: the daemon serves the image read-only; a guest write fails
new_guest
blkfront-test xl-add --domid $DOM --params "qcow2:$q/top.qcow2" --mode r --no-hotplug \
	--be-key script=block-blkbackd >/dev/null || fail "xl-add mode=r"
be=$(bk_be $DOM)
xs_wait "$be/state" 2
XENBUS_PATH=$be "$IMAGE_SCRIPT" add || fail "add mode=r: $(xenstore-read "$be/hotplug-error" 2>&1)"
IMAGE_SOCK=$(xenstore-read "$be/image-socket") IMAGE_PID=$(cat "$IMAGE_DIR"/vbd-$DOM-51712.pid)
grep -q "writable=off" /proc/$IMAGE_PID/cmdline || fail "mode=r: the export is writable"
cat > "$q/ro" <<'EOS'
fill p0 seed:3
send op=write id=1 sector=8 seg=p0 expect=ERROR
send op=read id=2 sector=8 seg=p1 expect=OKAY
EOS
run_script $DOM "$q/ro"
image_remove $DOM
qemu-img convert -O raw "$q/top.qcow2" "$q/got.raw" || fail "qemu-img convert after mode=r"
cmp "$q/got.raw" "$q/want2.raw" || fail "a mode=r guest changed the image"
stop_backend
exit 0
