#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No hang when the backend dies: with blkbackd SIGKILLed under a mounted
# export, I/O on the exported disk fails with EIO within the request
# timeout, and SIGTERM still unmounts and ends the export (exit 1: the
# device failed).  Then the same when blkbackd goes away cleanly and
# closes the device (SIGTERM with --close-on-exit): EIO at once.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires_root
requires test -c /dev/fuse
front_sim
img=$FT/disk.img
truncate -s 16M "$img"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"

for how in KILL TERM; do
	start_backend $([ $how = TERM ] && echo --close-on-exit)
	start_export "$FT/mnt" --domid $DOM --timeout 2000
	dd if=/dev/urandom of="$FT/mnt/disk" bs=64k count=4 oflag=direct status=none ||
		fail "write through the export failed while the backend was alive"
	pid=$(cat "$BACKEND_PIDFILE")
	kill -$how "$pid"
	wait_for 30 eval "! kill -0 $pid 2>/dev/null" || fail "blkbackd did not die"
	_backend_running=
	t0=$(date +%s)
	if timeout 60 dd if=/dev/zero of="$FT/mnt/disk" bs=64k count=4 oflag=direct status=none 2>"$FT/dd.err"; then
		fail "SIG$how: a write succeeded with no backend"
	fi
	t1=$(date +%s)
	grep -q "Input/output error" "$FT/dd.err" || fail "SIG$how: not EIO: $(cat "$FT/dd.err")"
	[ $((t1 - t0)) -le 10 ] || fail "SIG$how: EIO took $((t1 - t0)) s"
	timeout 60 dd if="$FT/mnt/disk" of=/dev/null bs=64k count=1 iflag=direct status=none 2>/dev/null &&
		fail "SIG$how: a read succeeded with no backend"
	grep -q "device disabled for further use" "$FT/export.log" ||
		fail "SIG$how: the export did not say the device failed"
	# SIGTERM: unmounted, exit 1 (the device failed), within 30 s
	_export_running=
	kill -TERM $EXPORT_PID
	rc=0
	timeout 30 tail --pid=$EXPORT_PID -f /dev/null || fail "SIG$how: export did not exit on SIGTERM"
	wait $EXPORT_PID || rc=$?
	[ "$rc" = 1 ] || fail "SIG$how: export exited $rc, expected 1"
	! mountpoint -q "$FT/mnt" || fail "SIG$how: $FT/mnt still mounted"
	: > "$FT/export.log"
	# the next backend starts from the toolstack's view again
	blkfront-test xl-remove --domid $DOM --force >/dev/null
	blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add"
done
exit 0
