#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A disk image block-blkbackd cannot serve fails "add": hotplug-status=
# error, a hotplug-error that says why in qemu's words, no image-socket,
# and no qemu-storage-daemon left (process, socket, pid file): a missing
# file, a file that is not qcow2, a broken backing chain, an image
# another daemon holds.  And where blkbackd is the one to find out -- the
# daemon died before the guest connected -- its error node says so.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-image.sh"
image_requires
start_sim_backend
q=$BK_TMP

# refused DEVID PARAMS HOTPLUG-ERROR: add fails just so, nothing left
refused() {
	local b=/local/domain/0/backend/vbd/7/$1
	xenstore-write "$b/params" "$2" "$b/mode" w
	if XENBUS_PATH=$b "$IMAGE_SCRIPT" add 2>/dev/null; then fail "add accepted $2"; fi
	xs_is "$b/hotplug-status" error
	[ "$(xenstore-read "$b/hotplug-error")" = "$3" ] ||
		fail "hotplug-error for $2: \"$(xenstore-read "$b/hotplug-error")\", expected \"$3\""
	xs_absent "$b/image-socket"
	[ -z "$(image_daemons)" ] || fail "$2: a qemu-storage-daemon is left: $(image_daemons)"
	[ -z "$(ls -A "$IMAGE_DIR" 2>/dev/null)" ] ||
		fail "$2: left in $IMAGE_DIR: $(ls -A "$IMAGE_DIR")"
}

refused 51712 "qcow2:$q/none.qcow2" "params: $q/none.qcow2 does not exist"
head -c 1M /dev/zero > "$q/raw.img"
refused 51728 "qcow2:$q/raw.img" "params: qcow2 image $q/raw.img: Image is not in qcow2 format"
qemu-img create -q -f qcow2 -b "$q/gone.qcow2" -F qcow2 -u "$q/orphan.qcow2" 16M ||
	fail "qemu-img create orphan"
refused 51744 "qcow2:$q/orphan.qcow2" "params: qcow2 image $q/orphan.qcow2: Could not open backing file: Could not open '$q/gone.qcow2': No such file or directory"
refused 51760 "qcow2:relative.qcow2" "params: relative.qcow2 is not an absolute path"

# an image another daemon holds (qemu's image lock): the second add fails
# and the first daemon is not touched
qemu-img create -q -f qcow2 "$q/a.qcow2" 16M || fail "qemu-img create a"
new_guest
image_add $DOM "qcow2:$q/a.qcow2"
first=$IMAGE_PID
b2=/local/domain/0/backend/vbd/8/51712
xenstore-write "$b2/params" "qcow2:$q/a.qcow2" "$b2/mode" w
if XENBUS_PATH=$b2 "$IMAGE_SCRIPT" add 2>/dev/null; then fail "a second add of one image succeeded"; fi
xs_is "$b2/hotplug-status" error
case "$(xenstore-read "$b2/hotplug-error")" in
"params: qcow2 image $q/a.qcow2: Failed to get \"write\" lock"*) ;;
*) fail "hotplug-error for a locked image: $(xenstore-read "$b2/hotplug-error")" ;;
esac
[ "$(image_daemons)" = "$first" ] || fail "daemons after the refused add: $(image_daemons), not $first"

# the daemon dies before the guest connects: blkbackd's error node
kill -KILL "$first"
blkfront-test attach --domid $DOM > "$q/attach.out" 2>&1 &
att=$!
cleanup_fn kill $att
wait_for 10 xenstore-read "$be/error" >/dev/null 2>&1 || fail "no error node"
pre="params: qcow2 image, served by the hotplug script's qemu-storage-daemon: cannot connect to nbd+unix:///image?socket=$IMAGE_SOCK: "
case "$(xenstore-read "$be/error")" in
# refused, or reset when the connect came while the daemon was dying;
# either way the reason's last words are there (not cut)
"$pre"*"Connection refused" | "$pre"*"Connection reset by peer") ;;
*) fail "error node: $(xenstore-read "$be/error" 2>&1)" ;;
esac
wait $att && fail "the guest attached to a disk whose daemon is dead"
XENBUS_PATH=$be "$IMAGE_SCRIPT" remove || fail "remove after the daemon died"
[ ! -e "$IMAGE_SOCK" ] || fail "$IMAGE_SOCK left behind"
stop_backend
exit 0
