#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No hang when the export's device fails under a filesystem: ext4 on a
# loop device (--direct-io=on) on blkfront-test export, a writer running;
# then (1) blkbackd SIGKILLed mid-I/O, (2) blkbackd stopped (SIGSTOP) so
# the device is disabled by the request timeout.  Each time, within 30 s:
# the writer ends with an error, a dd to the exported file fails with EIO,
# the filesystem unmounts, the loop device detaches and SIGTERM ends the
# export with its mount gone.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_fuse_loop
front_sim
img=$FT/disk.img
truncate -s 64M "$img"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
mkdir -p "$FT/fs"

for how in KILL STOP; do
	start_backend
	start_export "$FT/mnt" --domid $DOM --timeout 3000
	attach_loop "$FT/mnt/disk"
	mkfs.ext4 -q -F -E nodiscard "$LOOPDEV" || fail "$how: mkfs.ext4"
	mount -t ext4 "$LOOPDEV" "$FT/fs" || fail "$how: mount"
	umount_at_exit "$FT/fs"
	( while :; do
		dd if=/dev/zero of="$FT/fs/f" bs=64k count=64 conv=fsync status=none || exit 1
	done ) 2>"$FT/writer.err" &
	writer=$!
	cleanup_fn kill $writer
	sleep 1
	pid=$(cat "$BACKEND_PIDFILE")
	kill -$how "$pid"
	t0=$(date +%s)
	timeout 30 tail --pid=$writer -f /dev/null ||
		fail "$how: the writer on the filesystem still runs 30 s after the device failed"
	timeout 30 dd if=/dev/zero of="$FT/mnt/disk" bs=4k count=1 oflag=direct status=none \
		2>"$FT/dd.err" && fail "$how: a write to the export succeeded"
	grep -q "Input/output error" "$FT/dd.err" || fail "$how: not EIO: $(cat "$FT/dd.err")"
	[ $(($(date +%s) - t0)) -le 30 ] || fail "$how: EIO took $(($(date +%s) - t0)) s"
	timeout 30 umount "$FT/fs" || fail "$how: umount of the filesystem failed or hung"
	# (ENXIO: already detached; front-lib's exit-time detach of another
	# test may pick a reused loop number)
	timeout 30 losetup -d "$LOOPDEV" || [ -z "$(timeout 10 losetup -j "$FT/mnt/disk")" ] ||
		fail "$how: losetup -d failed or hung"
	_export_running=
	kill -TERM $EXPORT_PID
	timeout 30 tail --pid=$EXPORT_PID -f /dev/null || fail "$how: export did not exit on SIGTERM"
	wait $EXPORT_PID || true
	! mountpoint -q "$FT/mnt" || fail "$how: $FT/mnt still mounted"
	grep -q "device disabled for further use" "$FT/export.log" ||
		fail "$how: the export did not say the device failed"
	: > "$FT/export.log"
	if [ $how = STOP ]; then
		kill -CONT "$pid"
		stop_backend
	else
		wait_for 10 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd survived SIGKILL"
		_backend_running=
	fi
	blkfront-test xl-remove --domid $DOM --force >/dev/null
	blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
done
exit 0
