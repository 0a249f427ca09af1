# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the test-harness-*.sh tests (sourced after functions.sh).

# assert_clean DIR [PID]: nothing blkbench made under DIR is still mounted
# or attached to a loop device, DIR's work directories are gone, and (with
# PID) no memory cgroup of that blkbench process remains.
assert_clean() {
	local dir=$1 pid=${2:-}
	if grep -F "$dir" /proc/mounts; then
		fail "still mounted under $dir (above)"
	fi
	if losetup -a | grep -F "$dir"; then
		fail "loop device still attached to a file under $dir (above)"
	fi
	if [ -n "$(find "$dir" -maxdepth 1 -name 'blkbench.*' 2>/dev/null)" ]; then
		fail "work directory left in $dir: $(find "$dir" -maxdepth 1 -name 'blkbench.*')"
	fi
	if [ -n "$pid" ] && [ -n "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "blkbench-$pid-*" 2>/dev/null)" ]; then
		fail "memory cgroup left: $(find /sys/fs/cgroup -maxdepth 8 -type d -name "blkbench-$pid-*")"
	fi
}

# Emergency teardown if a test fails half-way (assert_clean reports it first).
force_clean() {
	local dir=$1 m l
	for m in $(grep -F "$dir" /proc/mounts | awk '{print $2}' | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	for l in $(losetup -a | grep -F "$dir" | cut -d: -f1); do
		losetup -d "$l" 2>/dev/null || true
	done
}

# Small sizes for a quick bonnie++ run (-s 64 -r 32 -n 1).
SMALL_BONNIE="--mem 32 --size 64 --files 1 --disk 300 --timeout 300"
