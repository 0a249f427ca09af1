#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Ctrl-C (SIGINT) and SIGTERM in the middle of a workload: blkbench exits
# 130 after tearing everything down: the workload's processes and memory
# cgroup, the mount, the loop device, the stack, the work directory.  A
# workload past --timeout is stopped the same way (exit 1).
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
tmp=$(mktemp -d /tmp/harness-int.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"

interrupt() {	# interrupt SIGNAL WORKLOAD-ARGS...
	local sig=$1 pid rc=0; shift
	blkbench run --out "$tmp/res-$sig" --workdir "$tmp" --runs 1 --where raw --wce 1 \
		--barrier 1 --fs ext4 --mem 32 --disk 300 "$@" > "$tmp/out" 2> "$tmp/err" &
	pid=$!
	# Wait until the workload really runs on the mounted filesystem.
	wait_for 60 grep -qF "$tmp/blkbench." /proc/mounts ||
		{ kill $pid; cat "$tmp/err"; fail "no mount under $tmp within 60 s"; }
	wait_for 30 test -n "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "blkbench-$pid-*" 2>/dev/null)" ||
		{ kill $pid; fail "no workload cgroup within 30 s"; }
	sleep 1
	kill -"$sig" $pid || { cat "$tmp/err"; fail "blkbench exited before SIG$sig"; }
	wait $pid || rc=$?
	[ "$rc" = 130 ] || { cat "$tmp/err"; fail "$sig: exit $rc, want 130"; }
	grep -qF "interrupted" "$tmp/err" || fail "$sig: no 'interrupted' message"
	assert_clean "$tmp" "$pid"
}

# SIGINT while fsync-tester and the bigfile loop run.
interrupt INT --workload fsync --fsync-count 1000 --size 64
# SIGTERM while bonnie++ runs.
interrupt TERM --workload bonnie --size 2048 --files 1 --disk 2400

# A workload that outlives --timeout: stopped, torn down, named.
rc=0
blkbench run --out "$tmp/res-timeout" --workdir "$tmp" --runs 1 --where raw --wce 1 \
	--barrier 1 --fs ext4 --mem 32 --disk 300 --workload fsync --fsync-count 1000 \
	--size 64 --timeout 3 > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/err"; fail "timeout: exit $rc, want 1"; }
grep -qF "fsync-tester did not finish within --timeout 3 s" "$tmp/err" ||
	{ cat "$tmp/err"; fail "timeout not explained"; }
assert_clean "$tmp"
echo ok
