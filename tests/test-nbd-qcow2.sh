#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A qcow2 image with a two-level backing chain (base <- mid <- top),
# served by qemu-storage-daemon on a private unix socket, as a guest's
# disk through the nbd store.  From outside blkbackd:
#  - the guest reads the whole disk (blkfront-test export: FUSE over the
#    ring) byte-exact against `qemu-img convert -O raw` of the same image;
#  - the guest writes (1 MiB over data from all three layers, 4 KiB at
#    the last page) and flushes; once the daemon has stopped, `qemu-img
#    check` finds top clean, its conversion is the old one with exactly
#    the guest's writes in it, and base and mid are untouched (a write
#    goes to the top layer only).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
requires qemu-img --version
requires qemu-io --version
requires qemu-storage-daemon --version
requires_root
requires test -c /dev/fuse
start_sim_backend

q=$BK_TMP
qemu-img create -q -f qcow2 "$q/base.qcow2" 16M || fail "qemu-img create base"
qemu-io -f qcow2 -c "write -P 0x11 0 4M" -c "write -P 0x12 8M 1M" "$q/base.qcow2" >/dev/null ||
	fail "qemu-io base"
qemu-img create -q -f qcow2 -b base.qcow2 -F qcow2 "$q/mid.qcow2" || fail "qemu-img create mid"
qemu-io -f qcow2 -c "write -P 0x22 2M 2M" -c "write -z 8M 64k" "$q/mid.qcow2" >/dev/null ||
	fail "qemu-io mid"
qemu-img create -q -f qcow2 -b mid.qcow2 -F qcow2 "$q/top.qcow2" || fail "qemu-img create top"
qemu-io -f qcow2 -c "write -P 0x33 3M 512k" -c "write -P 0x34 15M 1M" "$q/top.qcow2" >/dev/null ||
	fail "qemu-io top"
qemu-img convert -O raw "$q/top.qcow2" "$q/want.raw" || fail "qemu-img convert"
lower_sums=$(cat "$q/base.qcow2" "$q/mid.qcow2" | md5sum)

sock=$q/qsd.sock
qemu-storage-daemon --pidfile "$q/qsd.pid" \
	--blockdev driver=file,node-name=f,filename="$q/top.qcow2" \
	--blockdev driver=qcow2,node-name=disk,file=f \
	--nbd-server addr.type=unix,addr.path="$sock" \
	--export type=nbd,id=e,node-name=disk,name=disk,writable=on \
	> "$q/qsd.log" 2>&1 &
qsd=$!
cleanup_fn kill -KILL $qsd
wait_for 20 test -S "$sock" || { cat "$q/qsd.log"; fail "qemu-storage-daemon did not start"; }

new_guest
add_disk $DOM "nbd:nbd+unix:///disk?socket=$sock"
start_export "$q/mnt" --domid $DOM --max-indirect 16
cmp "$q/mnt/disk" "$q/want.raw" || fail "the guest's disk is not qemu-img convert's raw image"

# the guest writes and flushes (fsync: the export sends a FLUSH)
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
stop_export

kill -TERM $qsd
wait $qsd
qemu-img check -q "$q/top.qcow2" || fail "qemu-img check: top.qcow2 is not clean"
qemu-img convert -O raw "$q/top.qcow2" "$q/got.raw" || fail "qemu-img convert after"
cmp "$q/got.raw" "$q/want2.raw" || fail "top.qcow2 does not hold exactly the guest's writes"
[ "$(cat "$q/base.qcow2" "$q/mid.qcow2" | md5sum)" = "$lower_sums" ] ||
	fail "a backing file changed: writes must go to the top layer only"
good_device_works memory:1M
stop_backend
exit 0
