#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A qcow2 disk's qemu-storage-daemon belongs to the hotplug script, not
# to blkbackd: a blkbackd restart (an upgrade) while the guest is
# attached leaves the very same daemon process serving the image, the
# new blkbackd finds its socket again in xenstore (image-socket) and
# takes the ring over, and the guest's I/O goes on: a write before the
# restart and one after both read back byte-exact, and the image is
# clean (qemu-img check) once "remove" stopped the daemon.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-image.sh"
image_requires
start_sim_backend
q=$BK_TMP
qcow2_chain "$q"
new_guest
image_add $DOM "qcow2:$q/top.qcow2"
fe=/local/domain/$DOM/device/vbd/51712
cat > "$q/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe restart-done 1 timeout=60000
fill p1 seed:2
send op=write id=2 sector=30000 seg=p1 expect=OKAY timeout=20000
send op=flush id=3 nr_segments=0 expect=OKAY timeout=20000
send op=read id=4 sector=8 seg=p2 expect=OKAY timeout=20000
check p2 seed:1
send op=read id=5 sector=30000 seg=p3 expect=OKAY timeout=20000
check p3 seed:2
EOS
blkfront-test script --domid $DOM --max-indirect 16 "$q/s" > "$q/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q " op=write id=1 .*status=0" "$BACKEND_TRACE" || fail "the first write was not answered"

stop_backend
kill -0 "$IMAGE_PID" || fail "qemu-storage-daemon $IMAGE_PID died with blkbackd"
start_backend
wait_for 30 served_by $DOM "$(bk_pid)" || fail "the new blkbackd does not serve the ring"
xenstore-write "$fe/restart-done" 1
wait $front || { cat "$q/s.out"; fail "the guest's I/O did not go on after the restart"; }
grep -q " op=write id=2 .*status=0" "$BACKEND_TRACE" || fail "the new blkbackd did not serve the write"
[ "$(cat "${IMAGE_SOCK%.sock}.pid")" = "$IMAGE_PID" ] && kill -0 "$IMAGE_PID" ||
	fail "not the same qemu-storage-daemon after the restart"
[ "$(image_daemons)" = "$IMAGE_PID" ] || fail "daemons: $(image_daemons), expected $IMAGE_PID"
image_remove $DOM
qemu-img check -q "$q/top.qcow2" || fail "qemu-img check: top.qcow2 is not clean"
stop_backend
exit 0
