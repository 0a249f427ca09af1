# SPDX-License-Identifier: GPL-2.0-or-later
# front-lib.sh: helpers for blkfront-test's integration tests (tests/front.mk).
# Source after functions.sh:
#   . ./functions.sh; . "$abs_top_srcdir/tests/front-lib.sh"
# It sources lib-backend.sh (start_backend, stop_backend, BK_TMP, ...).
#
#   front_sim               start xensim and a guest ($DOM)
#   fe_dir / be_dir         the vbd's frontend / backend directory (xvda)
#   start_export MNT ARGS   blkfront-test export in the background ($EXPORT_PID)
#   stop_export             SIGTERM it; fail unless it exits 0 within 30 s
#   attach_loop FILE        losetup --direct-io=on; sets $LOOPDEV (detached at exit)
. "$abs_top_srcdir/tests/lib-backend.sh"
FT=$BK_TMP

front_sim() {
	requires test -x "$abs_top_builddir/sim/xensim"
	start_xensim
	new_guest
}

fe_dir() { echo "/local/domain/$DOM/device/vbd/${1:-51712}"; }
be_dir() { bk_be "$DOM" "${1:-51712}"; }

_export_running=
start_export() {
	local mnt=$1
	shift
	mkdir -p "$mnt"
	rm -f "$FT/export.pid"
	blkfront-test export "$@" --pidfile "$FT/export.pid" "$mnt" 2>>"$FT/export.log" &
	EXPORT_PID=$!
	EXPORT_MNT=$mnt
	_export_running=1
	cleanup_fn _front_kill_export
	wait_for 30 test -s "$FT/export.pid" || {
		cat "$FT/export.log"; fail "blkfront-test export did not start"; }
	wait_for 10 test -e "$mnt/disk" || fail "$mnt/disk did not appear"
}

_front_kill_export() {
	[ -n "$_export_running" ] || return 0
	kill "$EXPORT_PID" 2>/dev/null
	sleep 0.5
	kill -9 "$EXPORT_PID" 2>/dev/null
	umount -l "$EXPORT_MNT" 2>/dev/null
	return 0
}

stop_export() {
	local rc=0 i
	_export_running=
	kill -TERM "$EXPORT_PID" 2>/dev/null || fail "export ($EXPORT_PID) is already gone"
	for (( i=0; i<300; i++ )); do
		kill -0 "$EXPORT_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$EXPORT_PID" 2>/dev/null; then
		kill -KILL "$EXPORT_PID"
		fail "blkfront-test export did not exit within 30 s of SIGTERM"
	fi
	wait "$EXPORT_PID" || rc=$?
	if [ "$rc" != 0 ]; then
		cat "$FT/export.log"
		fail "blkfront-test export exited with status $rc"
	fi
	! mountpoint -q "$EXPORT_MNT" || fail "$EXPORT_MNT is still mounted"
}

attach_loop() {
	LOOPDEV=$(losetup -f --show --direct-io=on "$1") || fail "losetup --direct-io=on $1 failed"
	cleanup_fn _front_loop_detach "$LOOPDEV" "$(_front_loop_backing "$LOOPDEV")"
	[ "$(losetup -n -O DIO "$LOOPDEV" | tr -d ' ')" = 1 ] ||
		fail "$LOOPDEV: direct I/O is off"
	# a reused loop device keeps its last user's write_cache mode (Linux
	# 6.18); "write through" would drop the flushes these tests count
	local wc=/sys/block/${LOOPDEV#/dev/}/queue/write_cache
	if [ -w "$wc" ] && [ "$(cat "$wc")" != "write back" ]; then
		echo "write back" > "$wc" || fail "$LOOPDEV: cannot set write_cache"
	fi
	# ... and a read-only flag its last user set (blockdev --setro:
	# BLKROSET outlives the detach), which would refuse mode=w
	[ "$(blockdev --getro "$LOOPDEV")" = 0 ] || blockdev --setrw "$LOOPDEV" ||
		fail "$LOOPDEV: cannot clear its read-only flag"
}

# detach_loop: detach the test's loop device now, if it is still attached
# (the exit cleanup then finds it gone, or another test's, and leaves it).
detach_loop() {
	losetup "$LOOPDEV" >/dev/null 2>&1 && losetup -d "$LOOPDEV"
	return 0
}

# The backing (device and inode) a loop device has now.
_front_loop_backing() { losetup -n -O BACK-MAJ:MIN,BACK-INO "$1" 2>/dev/null | tr -s ' '; }
# _front_loop_detach DEV BACKING: at exit, detach DEV if it still serves
# our backing.  A test may have detached it itself, and another test
# running beside it (make -j2 check) taken the same number since: that
# one's device must not be pulled from under it.
_front_loop_detach() {
	[ -n "$2" ] && [ "$(_front_loop_backing "$1")" = "$2" ] && losetup -d "$1"
	return 0
}

# mount_at_exit DIR: lazily unmount DIR at exit if it is still mounted.
umount_at_exit() { cleanup_fn _front_umount "$1"; }
_front_umount() {
	mountpoint -q "$1" && umount -l "$1"
	return 0
}

# requires_fuse_loop: root, /dev/fuse, losetup, mkfs.ext4, e2fsck.
requires_fuse_loop() {
	requires_root
	requires test -c /dev/fuse
	requires losetup --version
	requires which mkfs.ext4 e2fsck
}
