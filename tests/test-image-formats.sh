#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The other image formats block-blkbackd serves (params FORMAT:PATH):
# qed, vmdk, vhdx, vpc (VHD) and vdi, each attached libxl's way.  For
# each, from outside blkbackd: the guest reads the whole disk
# (blkfront-test export) byte-exact against `qemu-img convert -O raw`,
# writes 64 KiB and fsyncs; once "remove" stopped the daemon, the
# image's conversion is the old one with exactly that write in it (and
# `qemu-img check` is clean where qemu can check the format).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
. "$abs_top_srcdir/tests/lib-image.sh"
image_requires
requires_root
requires test -c /dev/fuse
start_sim_backend
q=$BK_TMP
head -c 65536 /dev/urandom > "$q/blob"
for fmt in qed vmdk vhdx vpc vdi; do
	img=$q/disk.$fmt
	qemu-img create -q -f $fmt "$img" 16M || fail "qemu-img create -f $fmt"
	qemu-io -f $fmt -c "write -P 0x5a 1M 2M" -c "write -P 0xa5 12M 64k" "$img" >/dev/null ||
		fail "qemu-io $fmt"
	qemu-img convert -f $fmt -O raw "$img" "$q/want.raw" || fail "qemu-img convert $fmt"
	new_guest
	image_add $DOM "$fmt:$img"
	start_export "$q/mnt" --domid $DOM --max-indirect 16
	cmp "$q/mnt/disk" "$q/want.raw" || fail "$fmt: the guest's disk is not qemu-img convert's"
	dd if="$q/blob" of="$q/mnt/disk" bs=64k seek=$(( (2 << 20) + 4096 )) oflag=seek_bytes \
		conv=notrunc,fsync status=none || fail "$fmt: guest write"
	dd if="$q/blob" of="$q/want.raw" bs=64k seek=$(( (2 << 20) + 4096 )) oflag=seek_bytes \
		conv=notrunc status=none
	cmp "$q/mnt/disk" "$q/want.raw" || fail "$fmt: the guest does not read back its write"
	stop_export
	image_remove $DOM
	case $fmt in
	vpc) ;;	# qemu-img check cannot check VHD
	*) qemu-img check -q -f $fmt "$img" || fail "qemu-img check: $img is not clean" ;;
	esac
	qemu-img convert -f $fmt -O raw "$img" "$q/got.raw" || fail "qemu-img convert $fmt after"
	cmp "$q/got.raw" "$q/want.raw" || fail "$img does not hold exactly the guest's write"
done
[ -z "$(image_daemons)" ] || fail "a qemu-storage-daemon is left: $(image_daemons)"
stop_backend
exit 0
