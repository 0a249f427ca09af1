#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-initramfs.sh: build what one nested real-Xen boot needs, under $B:
#   xen-4.17     uncompressed multiboot ELF32 Xen (from /boot/xen-4.17-amd64.gz)
#   vmlinuz      the Debian kernel (dom0 and every domU run the same one)
#   domu.cpio    domU initramfs: busybox, xen-blkfront, ext4/xfs, GNU dd,
#                mke2fs/e2fsck, mkfs.xfs/xfs_repair, bonnie++, blkdiscard
#   dom0.cpio    dom0 initramfs: busybox, xen modules, xl + xenstored +
#                xenconsoled, the qdisk QEMU, the project's blkbackd and
#                hotplug script, domu.cpio + vmlinuz for the guests
#   with FIO=1 (make bench-xen), also:
#   domu-fio.cpio   fio and its libraries, a gzipped archive to append to
#                   domu.cpio
#   dom0-bench.cpio dom0.cpio plus /boot/domu-bench.cpio (domu.cpio +
#                   domu-fio.cpio) for the bench guest
#
# Usage: build-initramfs.sh   (environment: B, SRCDIR, TOP_SRCDIR,
#        TOP_BUILDDIR; K = kernel version, default: newest Debian kernel
#        that has both /boot/vmlinuz-K and /lib/modules/K; BLKBACKD,
#        BLKFRONT_TEST, FSMARK = the project's programs, default under
#        TOP_BUILDDIR; DOMU_ONLY=1: only domu.cpio (for K), for
#        blkbench --platform xen-host on a real Xen machine)
# The running host kernel is irrelevant: the guests run the packaged one.
set -euo pipefail
B=${B:?B=build dir}
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")" && pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$SRCDIR/../..}
TOP_BUILDDIR=${TOP_BUILDDIR:-$TOP_SRCDIR}
XB=/usr/lib/xen-4.17/bin

if [ -z "${K:-}" ]; then
	for k in $(ls /lib/modules 2>/dev/null | sort -V); do
		[ -f "/boot/vmlinuz-$k" ] && K=$k
	done
fi
[ -n "${K:-}" ] || { echo "build-initramfs: no kernel with /boot/vmlinuz-K and /lib/modules/K (apt-get install linux-image-amd64)" >&2; exit 1; }
echo "build-initramfs: kernel $K"

# blkbackd, blkbackd-ctl and the hotplug script: the Debian package's
# files when BLKBACKD_DEB names blkbackd_*.deb (dpkg -x: what an
# administrator installs is what real Xen runs), else the build tree's;
# either way at the package's paths in dom0.
if [ -n "${BLKBACKD_DEB:-}" ]; then
	[ -f "$BLKBACKD_DEB" ] || { echo "build-initramfs: BLKBACKD_DEB=$BLKBACKD_DEB: no such file" >&2; exit 1; }
	PKG=$B/pkg-blkbackd
	rm -rf "$PKG"
	mkdir -p "$PKG"
	dpkg -x "$BLKBACKD_DEB" "$PKG" || { echo "build-initramfs: dpkg -x $BLKBACKD_DEB failed" >&2; exit 1; }
	BLKBACKD=$PKG/usr/sbin/blkbackd
	BLKBACKD_CTL=$PKG/usr/sbin/blkbackd-ctl
	HOTPLUG=$PKG/etc/xen/scripts/block-blkbackd
	echo "build-initramfs: blkbackd from the package $(basename "$BLKBACKD_DEB") (version $(dpkg-deb -f "$BLKBACKD_DEB" Version), dpkg -x)"
else
	BLKBACKD=${BLKBACKD:-$TOP_BUILDDIR/backend/blkbackd}
	BLKBACKD_CTL=$(dirname "$BLKBACKD")/blkbackd-ctl
	HOTPLUG=$TOP_SRCDIR/backend/block-blkbackd
	echo "build-initramfs: blkbackd from the build tree: $BLKBACKD (BLKBACKD_DEB not set)"
fi
BLKFRONT_TEST=${BLKFRONT_TEST:-$TOP_BUILDDIR/frontend-test/blkfront-test}
FSMARK=${FSMARK:-$TOP_BUILDDIR/harness/fsmark}

mkdir -p "$B"
if [ "${DOMU_ONLY:-0}" != 1 ]; then
	zcat /boot/xen-4.17-amd64.gz > "$B/xen-4.17"
	cp "/boot/vmlinuz-$K" "$B/vmlinuz"
fi

# copy_bin ROOT FILE...: copy programs (or libraries) plus what ldd lists
copy_bin() {
	local r=$1 f l
	shift
	for f in "$@"; do
		mkdir -p "$r$(dirname "$f")"
		cp -L "$f" "$r$f"
		ldd "$f" 2>/dev/null | grep -oE '/[^ ]+' | while read -r l; do
			[ -e "$l" ] || continue
			mkdir -p "$r$(dirname "$l")"
			[ -e "$r$l" ] || cp -L "$l" "$r$l"
		done
	done
}
# copy_gnu ROOT FILE...: GNU tools go to /gnu/ so busybox --install cannot
# shadow them (Debian's static busybox prefers its own applets); call them
# by absolute path.
copy_gnu() {
	local r=$1 f
	shift
	mkdir -p "$r/gnu"
	for f in "$@"; do
		copy_bin "$r" "$f"
		ln -sf "$f" "$r/gnu/$(basename "$f")"
	done
}
# copy_mods ROOT LIST MOD...: modules with their dependencies, in load order,
# listed one per line in ROOT/LIST
copy_mods() {
	local r=$1 list=$2 m ko
	shift 2
	: > "$r/$list"
	for m in "$@"; do modprobe -S "$K" --show-depends "$m"; done |
		awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' |
		while read -r ko; do
			mkdir -p "$r$(dirname "$ko")"
			cp "$ko" "$r$ko"
			echo "$ko" >> "$r/$list"
		done
}
base_root() {
	local r=$1
	rm -rf "$r"
	mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,run,tmp,mnt,usr/bin,usr/sbin,usr/local/bin,usr/local/sbin,var}
	cp /bin/busybox "$r/bin/busybox"
	ln -s /run "$r/var/run"
	# bonnie++ -u root looks the name up
	echo 'root:x:0:0:root:/root:/bin/sh' > "$r/etc/passwd"
	echo 'root:x:0:' > "$r/etc/group"
}
# copy_prog ROOT FILE NAME: one of this project's programs (libraries
# included: sanitizer builds need theirs) as /usr/local/bin/NAME
copy_prog() {
	copy_bin "$1" "$2"
	mkdir -p "$1/usr/local/bin"
	mv "$1$2" "$1/usr/local/bin/$3"
	mkdir -p "$1/gnu"
	ln -sf "/usr/local/bin/$3" "$1/gnu/$3"
}
# the tools blkbench's xen jobs run, in dom0 (dom0 rows) as in the guests
BENCH_GNU="/sbin/mke2fs /sbin/mkfs.xfs /usr/sbin/bonnie++ /bin/sync"
BENCH_MODS="crc32c_generic ext4 xfs"
mkcpio() { (cd "$1" && find . | cpio -o -H newc --quiet) > "$2"; }

# ---------------- domU ----------------
U=$B/rootU
base_root "$U"
install -m755 "$SRCDIR/domU-init.sh" "$U/init"
# crc32c_generic: ext4 and xfs only soft-depend on it; no modprobe here
copy_mods "$U" modules.list xen-blkfront crc32c_generic ext4 xfs xen-evtchn xen-gntalloc
copy_gnu "$U" /bin/dd /usr/bin/cmp /usr/bin/md5sum /sbin/mke2fs /sbin/e2fsck \
	/sbin/mkfs.xfs /sbin/xfs_repair /usr/sbin/bonnie++ /sbin/blkdiscard /sbin/fstrim /bin/sync
cp /etc/mke2fs.conf "$U/etc/"
# this project's userspace frontend, for the hostile-request scripts
if [ -x "$BLKFRONT_TEST" ]; then
	copy_prog "$U" "$BLKFRONT_TEST" blkfront-test
	mkdir -p "$U/xt-hostile"
	cp "$SRCDIR"/hostile/*.script "$U/xt-hostile/"
else
	echo "build-initramfs: $BLKFRONT_TEST not built: hostile steps will be skipped"
fi
# blkbench's fs_mark-compatible workload
if [ -x "$FSMARK" ]; then
	copy_prog "$U" "$FSMARK" fsmark
else
	echo "build-initramfs: $FSMARK not built: blkbench's fsmark jobs will fail"
fi
mkcpio "$U" "$B/domu.cpio"
[ "${DOMU_ONLY:-0}" != 1 ] || { ls -la "$B/domu.cpio"; exit 0; }

# ---------------- dom0 ----------------
R=$B/root0
base_root "$R"
install -m755 "$SRCDIR/dom0-init.sh" "$R/init"
install -m644 "$SRCDIR/lw-rounds.sh" "$R/lw-rounds.sh"
copy_mods "$R" modules.list xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs loop
# kernel blkback is loaded only for the comparison phase, after blkbackd's
copy_mods "$R" modules-blkback.list xen-blkback
# RAM disks for make bench-xen's block-device table (loaded there only)
copy_mods "$R" modules-brd.list brd
# phase lw: the kernel's log-writes target and dmsetup, blkcrash to
# judge its log (RAM disks from modules-brd.list)
copy_mods "$R" modules-dm.list dm-log-writes
[ ! -x /sbin/dmsetup ] || copy_bin "$R" /sbin/dmsetup
# blkcrash fsck runs cp --sparse and e2fsck (PATH=/gnu:... in phase lw)
copy_gnu "$R" /bin/cp /sbin/e2fsck
copy_bin "$R" $XB/xl $XB/xenstored $XB/xenconsoled $XB/xen-init-dom0 $XB/libxl-save-helper \
	/usr/bin/xenstore /bin/bash /usr/bin/flock /usr/bin/stat /usr/bin/readlink /sbin/losetup \
	/usr/bin/logger
copy_gnu "$R" /usr/bin/md5sum /bin/dd /usr/bin/stat $BENCH_GNU
# make bench-xen's system-call pass (strace -f -c on blkbackd), if installed
[ ! -x /usr/bin/strace ] || copy_bin "$R" /usr/bin/strace
# make bench-xen BX_TRACE: Xen's own trace of the hypercalls (xentrace)
[ ! -x $XB/xentrace ] || copy_bin "$R" $XB/xentrace
cp /etc/mke2fs.conf "$R/etc/"
# filesystems are loaded only for blkbench's dom0 rows (phase jobs)
copy_mods "$R" modules-fs.list $BENCH_MODS
[ ! -x "$U/usr/local/bin/fsmark" ] || copy_prog "$R" "$FSMARK" fsmark
# the hotplug scripts' claim_lock needs GNU stat (busybox's loops forever)
for t in ls read write list rm exists chmod watch; do ln -sf xenstore "$R/usr/bin/xenstore-$t"; done
mkdir -p "$R/etc/xen/scripts" "$R/usr/lib/xen-4.17" "$R/etc/xen/blkbackd"
cp -a /etc/xen/scripts/. "$R/etc/xen/scripts/"
cp /etc/xen/xl.conf "$R/etc/xen/" 2>/dev/null || true
if [ -x /usr/libexec/xen-qemu-system-i386 ]; then
	copy_bin "$R" /usr/libexec/xen-qemu-system-i386
	# QEMU loads the en-us keymap even with -vnc none
	mkdir -p "$R/usr/share/qemu"
	cp -a /usr/share/qemu/keymaps "$R/usr/share/qemu/"
fi

# this project: the daemon, its hotplug script, the hole checker
if [ -x "$BLKBACKD" ]; then
	mkdir -p "$R/usr/sbin"
	for f in "$BLKBACKD" "$BLKBACKD_CTL"; do
		[ -x "$f" ] || continue
		copy_bin "$R" "$f"
		mv "$R$f" "$R/usr/sbin/$(basename "$f")"
	done
	if [ -x "$U/usr/local/bin/blkfront-test" ]; then
		touch "$R/etc/xt-has-blkfront-test"
	fi
else
	echo "build-initramfs: $BLKBACKD not built: blkbackd steps will be skipped"
fi
if [ -f "$HOTPLUG" ]; then
	install -m755 "$HOTPLUG" "$R/etc/xen/scripts/block-blkbackd"
fi
# phase qc (a qcow2 disk through the hotplug script): the nbd store's
# module (the package's, or the build tree's) in /usr/lib/blkbackd,
# which dom0 names in BLKBACKD_STORE_DIR, and qemu-storage-daemon and
# qemu-img (Debian: qemu-system-common, qemu-utils) with their libraries
NBD_MOD=$TOP_BUILDDIR/backend/.libs/store-nbd.so
if [ -n "${PKG:-}" ]; then
	# the module's own package, beside blkbackd's
	for d in "$(dirname "$BLKBACKD_DEB")"/blkbackd-nbd_*.deb; do
		[ -f "$d" ] && dpkg -x "$d" "$PKG"
	done
	NBD_MOD=$(find "$PKG" -name store-nbd.so | head -1)
fi
if [ -f "$NBD_MOD" ] && [ -x /usr/bin/qemu-storage-daemon ] && [ -x /usr/bin/qemu-img ]; then
	copy_bin "$R" "$NBD_MOD" /usr/bin/qemu-storage-daemon /usr/bin/qemu-img
	mkdir -p "$R/usr/lib/blkbackd"
	mv "$R$NBD_MOD" "$R/usr/lib/blkbackd/store-nbd.so"
else
	echo "build-initramfs: no nbd store module or qemu-storage-daemon: phase qc will be skipped"
fi
BLKCRASH=${BLKCRASH:-$TOP_BUILDDIR/harness/crash/blkcrash}
if [ -x "$BLKCRASH" ]; then
	copy_prog "$R" "$BLKCRASH" blkcrash
else
	echo "build-initramfs: $BLKCRASH not built: phase lw will be skipped"
fi
if [ -x "$B/xt-holes" ]; then
	copy_bin "$R" "$B/xt-holes"
	mv "$R$B/xt-holes" "$R/usr/local/bin/xt-holes"
fi

mkdir -p "$R/boot"
cp "$B/vmlinuz" "$R/boot/vmlinuz"
cp "$B/domu.cpio" "$R/boot/domu.cpio"
mkcpio "$R" "$B/dom0.cpio"

# ---------------- bench-xen: fio for its guest ----------------
# Debian's fio links every ioengine's library (rbd, gluster, rdma, pmem...:
# ~80 MB), so only the bench guest gets it, as an archive appended to
# domu.cpio (concatenated newc archives: the kernel unpacks them in order,
# gunzipping this one: 36 MB less to carry in dom0's memory and to load);
# dom0 finds that guest's initramfs as /boot/domu-bench.cpio in the
# archive appended to dom0.cpio.
rm -f "$B/domu-fio.cpio" "$B/dom0-bench.cpio"
if [ "${FIO:-0}" = 1 ]; then
	F=$B/rootF
	rm -rf "$F"
	mkdir -p "$F"
	copy_bin "$F" /usr/bin/fio
	(cd "$F" && find . | cpio -o -H newc --quiet) | gzip -1 > "$B/domu-fio.cpio"
	rm -rf "$B/root0b"
	mkdir -p "$B/root0b/boot"
	cat "$B/domu.cpio" "$B/domu-fio.cpio" > "$B/root0b/boot/domu-bench.cpio"
	mkcpio "$B/root0b" "$B/dom0-bench.cpio.add"
	cat "$B/dom0.cpio" "$B/dom0-bench.cpio.add" > "$B/dom0-bench.cpio"
	rm -rf "$B/root0b" "$B/dom0-bench.cpio.add"
fi
ls -la "$B"/*.cpio "$B/xen-4.17" "$B/vmlinuz"
