#!/usr/bin/env bash
# Bad input to blkbench -> exit 1, a clear message naming the bad thing,
# and nothing left mounted or attached: an unknown workload, where, wce,
# config key; a missing tool; a mount option the kernel refuses; XFS
# nobarrier on a kernel without it.
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires python3 --version
tmp=$(mktemp -d /tmp/harness-bad.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"

expect_error() {	# expect_error PATTERN blkbench-args...
	local pat=$1 rc=0; shift
	blkbench "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$tmp/err"; fail "blkbench $*: exit $rc, want 1"; }
	grep -qF -- "$pat" "$tmp/err" || { cat "$tmp/err"; fail "blkbench $*: no '$pat' in the message"; }
	assert_clean "$tmp"
}
common=(--out "$tmp/res" --workdir "$tmp" --runs 1)

expect_error "unknown workload 'nope' in --workload bonnie,nope" run "${common[@]}" --workload bonnie,nope
expect_error "unknown where 'domX'" run "${common[@]}" --where dom0,domX
expect_error "--wce 2: '2' is not one of 0, 1" run "${common[@]}" --wce 2
expect_error "unknown filesystem 'zfs' in --fs zfs" run "${common[@]}" --fs zfs
expect_error "--file-size 512:2048: want MAX:MIN in bytes, MAX >= MIN" run "${common[@]}" --file-size 512:2048
expect_error "--file-size 4k: want MAX:MIN in bytes, MAX >= MIN" run "${common[@]}" --file-size 4k
expect_error "--prefill holes: sparse or zero" run "${common[@]}" --prefill holes
printf 'where = raw\nbarriers = 1\n' > "$tmp/bad.conf"
expect_error "$tmp/bad.conf:2: unknown key 'barriers'" run "${common[@]}" --config "$tmp/bad.conf"
# XFS has no nobarrier since Linux 4.19: refused before anything starts.
if [ "$(printf '%s\n' 4.19 "$(uname -r)" | sort -V | head -1)" = 4.19 ]; then
	expect_error "has no XFS 'nobarrier' mount option (removed in Linux 4.19)" \
		run "${common[@]}" --where raw --wce 1 --barrier 0 --fs xfs
fi

requires_root
requires command -v bonnie++

# A missing tool: bonnie++ not in PATH (the programs blkbench needs before
# it would run bonnie++ are there).
mkdir "$tmp/bin"
for p in python3 sh losetup mount umount mkfs.ext4 dmesg; do
	ln -s "$(command -v $p)" "$tmp/bin/$p"
done
rc=0
PATH=$tmp/bin "$(command -v blkbench)" run "${common[@]}" --where raw --wce 1 --barrier 1 --fs ext4 \
	$SMALL_BONNIE > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "missing tool: bonnie++ (apt-get install bonnie++)" "$tmp/err" ||
	{ cat "$tmp/err"; fail "missing bonnie++: rc $rc"; }
assert_clean "$tmp"

# A mount option the kernel refuses: the error names it; the loop device
# and the backing file are gone.
expect_error "mount -t ext4 -o barrier=1,bogus_opt_blkbench" \
	run "${common[@]}" --where raw --wce 1 --barrier 1 --fs ext4 \
	--mount-opts bogus_opt_blkbench $SMALL_BONNIE
grep -qF "refused by the kernel" "$tmp/err" || fail "mount refusal not explained: $(cat "$tmp/err")"
# An I/O scheduler the loop device does not offer.
expect_error "I/O scheduler 'no-such-sched' is not offered by /dev/loop" \
	run "${common[@]}" --where raw --wce 1 --barrier 1 --fs ext4 \
	--sched no-such-sched $SMALL_BONNIE
echo ok
