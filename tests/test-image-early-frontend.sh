#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest faster than the hotplug script (xl block-attach to a running
# guest: libxl writes the frontend with the backend, and runs the script
# only after blkbackd's InitWait): the frontend goes Initialised before
# block-blkbackd has started the qcow2 image's daemon.  It must just
# wait -- backend InitWait, no error node -- and connect once the script
# wrote image-socket; its I/O then works.  The script's cache=writethrough
# (BLKBACKD_CACHE) reaches the image as FUA on every write (the trace)
# and no flush is offered (the guest's disk has no volatile cache).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-image.sh"
image_requires
start_sim_backend
q=$BK_TMP
qemu-img create -q -f qcow2 "$q/disk.qcow2" 16M || fail "qemu-img create"

new_guest
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM "qcow2:$q/disk.qcow2" --no-hotplug --be-key script=block-blkbackd
xs_wait "$be/state" 2
cat > "$q/s" <<'EOS'
fill p0 seed:5
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=read id=2 sector=8 seg=p1 expect=OKAY
check p1 seed:5
EOS
blkfront-test script --domid $DOM --max-indirect 16 --timeout 60000 "$q/s" > "$q/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
xs_wait "$fe/state" 3
sleep 2	# blkbackd has seen the frontend's Initialised by now
xs_is "$be/state" 2
xs_absent "$be/error"
kill -0 $front || { cat "$q/s.out"; fail "the frontend gave up before the script ran"; }

XENBUS_PATH=${be#/local/domain/0/} BLKBACKD_CACHE=writethrough "$IMAGE_SCRIPT" add ||
	fail "block-blkbackd add failed: $(xenstore-read "$be/hotplug-error" 2>&1)"
IMAGE_SOCK=$(xenstore-read "$be/image-socket") || fail "no image-socket after add"
IMAGE_PID=$(cat "${IMAGE_SOCK%.sock}.pid")
wait $front || { cat "$q/s.out"; fail "the guest's I/O failed after the script ran"; }
grep -q " op=write id=1 .*host=nbd_aio_pwrite+FUA status=0" "$BACKEND_TRACE" ||
	{ grep "op=write" "$BACKEND_TRACE"; fail "cache=writethrough: the write was not FUA"; }
xs_is "$be/feature-flush-cache" 0
image_remove $DOM
qemu-img check -q "$q/disk.qcow2" || fail "qemu-img check: not clean"
stop_backend
exit 0
