# SPDX-License-Identifier: GPL-2.0-or-later
# lib-image.sh: disk images served by block-blkbackd's qemu-storage-daemon
# (params FORMAT:PATH), attached the libxl way on xensim (sourced after
# lib-backend.sh or front-lib.sh):
#   image_requires          skip unless blkbackd has the nbd store and
#                           qemu-img, qemu-io, qemu-storage-daemon exist
#   qcow2_chain DIR         base <- mid <- top.qcow2 (16 MiB, data in every
#                           layer) in DIR, and DIR/want.raw, qemu-img
#                           convert's raw image of top
#   image_add DOM PARAMS [ENV=VALUE...]
#                           libxl's order (libxl_device.c): the vbd's keys
#                           with script=block-blkbackd and no hotplug-status,
#                           wait for the backend's InitWait, then run the
#                           script's "add" (with ENV); fail unless it says
#                           connected.  Sets be, IMAGE_SOCK, IMAGE_PID.
#   image_remove DOM        libxl's removal: online=0 and Closing, wait for
#                           blkbackd's Closed, the script's "remove", then
#                           the directories go; fail unless the daemon's
#                           process, socket and pid file are gone.
#   image_daemons           the pids of the qemu-storage-daemons serving
#                           from $IMAGE_DIR (none: empty)
#   image_running PID       PID is there and has not exited (a daemon that
#                           exited is a zombie until init reaps it)
IMAGE_SCRIPT=$abs_top_srcdir/backend/block-blkbackd
export BLKBACKD_IMAGE_DIR=$BK_TMP/images
IMAGE_DIR=$BLKBACKD_IMAGE_DIR

image_requires() {
	grep -q "^#define HAVE_LIBNBD 1" "$abs_top_builddir/config.h" || {
		echo "$0: skipped: blkbackd built without the nbd store (libnbd-dev)"; exit 77; }
	requires qemu-img --version
	requires qemu-io --version
	requires qemu-storage-daemon --version
	cleanup_fn _image_kill_all
}

# at exit: no daemon of this test survives it, whatever failed
_image_kill_all() {
	local p
	for p in $(image_daemons); do kill -KILL "$p"; done
	return 0
}

image_running() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

image_daemons() {
	local c p
	for c in /proc/[0-9]*/cmdline; do
		p=${c#/proc/}
		p=${p%/cmdline}
		tr '\0' ' ' 2>/dev/null < "$c" | grep -q "^qemu-storage-daemon .*addr.path=$IMAGE_DIR/" &&
			echo "$p"
	done
	return 0
}

qcow2_chain() {
	local q=$1
	qemu-img create -q -f qcow2 "$q/base.qcow2" 16M || fail "qemu-img create base"
	qemu-io -f qcow2 -c "write -P 0x11 0 4M" -c "write -P 0x12 8M 1M" "$q/base.qcow2" \
		>/dev/null || fail "qemu-io base"
	qemu-img create -q -f qcow2 -b base.qcow2 -F qcow2 "$q/mid.qcow2" || fail "qemu-img create mid"
	qemu-io -f qcow2 -c "write -P 0x22 2M 2M" -c "write -z 8M 64k" "$q/mid.qcow2" >/dev/null ||
		fail "qemu-io mid"
	qemu-img create -q -f qcow2 -b mid.qcow2 -F qcow2 "$q/top.qcow2" || fail "qemu-img create top"
	qemu-io -f qcow2 -c "write -P 0x33 3M 512k" -c "write -P 0x34 15M 1M" "$q/top.qcow2" \
		>/dev/null || fail "qemu-io top"
	qemu-img convert -O raw "$q/top.qcow2" "$q/want.raw" || fail "qemu-img convert"
}

image_add() {
	local dom=$1 params=$2
	shift 2
	be=$(bk_be "$dom")
	add_disk "$dom" "$params" --no-hotplug --be-key script=block-blkbackd
	xs_wait "$be/state" 2
	# relative, as libxl gives it (libxl_device.c: backend/vbd/F/D)
	env "$@" XENBUS_PATH="${be#/local/domain/0/}" "$IMAGE_SCRIPT" add ||
		fail "block-blkbackd add failed: $(xenstore-read "$be/hotplug-error" 2>&1)"
	xs_is "$be/hotplug-status" connected
	IMAGE_SOCK=$(xenstore-read "$be/image-socket") || fail "no image-socket after add"
	[ -S "$IMAGE_SOCK" ] || fail "$IMAGE_SOCK is not a socket"
	IMAGE_PID=$(cat "${IMAGE_SOCK%.sock}.pid") || fail "no pid file beside $IMAGE_SOCK"
	kill -0 "$IMAGE_PID" || fail "qemu-storage-daemon $IMAGE_PID is not running"
}

image_remove() {
	local dom=$1 b
	b=$(bk_be "$dom")
	xenstore-write "$b/online" 0 "$b/state" 5
	xs_wait "$b/state" 6 30
	XENBUS_PATH=${b#/local/domain/0/} "$IMAGE_SCRIPT" remove || fail "block-blkbackd remove failed"
	blkfront-test xl-remove --domid "$dom" >/dev/null || fail "xl-remove failed"
	! image_running "$IMAGE_PID" || fail "qemu-storage-daemon $IMAGE_PID outlived remove"
	[ ! -e "$IMAGE_SOCK" ] || fail "$IMAGE_SOCK left behind by remove"
	[ ! -e "${IMAGE_SOCK%.sock}.pid" ] || fail "the pid file left behind by remove"
}
