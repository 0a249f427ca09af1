#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input to blkbench -> exit 1, a clear message naming the bad thing,
# and nothing left mounted or attached: an unknown workload, where, wce,
# config key; a missing tool; a mount option the kernel refuses; XFS
# nobarrier on a kernel without it; gen-tree --scale out of range; parse
# of a binary or empty file; a backing file too large to make.
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
expect_error "--disk-model 2009: host or 2008" run "${common[@]}" --disk-model 2009
expect_error "--warmup 2: 0 or 1" run "${common[@]}" --warmup 2
expect_error "--disk-model 2008: where=raw has no store to model the disk in" \
	run "${common[@]}" --where raw --wce 1 --barrier 1 --disk-model 2008
# the demo's disk is the 2008 one unless asked otherwise, on the command
# line or in a --config file; the host disk then gets the host's sizes
# (--mem 96)
expect_error "--disk-model 2008: where=raw has no store to model the disk in" \
	demo "${common[@]}" --where raw --wce 1 --barrier 1
printf 'disk-model = host\n' > "$tmp/host.conf"
expect_error "--size 100: bonnie++ needs at least twice --mem (192 MiB)" \
	demo "${common[@]}" --config "$tmp/host.conf" --size 100
# 0 is not "the default", and too small a bonnie++ file is said before
# anything is set up
expect_error "--size 0: must be at least 1" run "${common[@]}" --size 0
expect_error "--size 100: bonnie++ needs at least twice --mem (128 MiB)" run "${common[@]}" --mem 64 --size 100
expect_error "--chunk 3000: bonnie++ takes a power of two from 256 to 1048576" run "${common[@]}" --chunk 3000
expect_error "--chunk 128: must be at least 256" run "${common[@]}" --chunk 128
expect_error "--bonnie-seeks 8k: not a whole number" run "${common[@]}" --bonnie-seeks 8k
expect_error "--bonnie-fsync 2: 0 or 1" run "${common[@]}" --bonnie-fsync 2
expect_error "--bonnie-seed -3: not a whole number" run "${common[@]}" --bonnie-seed -3
expect_error "--bonnie-dirs 0: must be at least 1" run "${common[@]}" --bonnie-dirs 0
expect_error "--journal big: not a whole number" run "${common[@]}" --journal big
expect_error "--journal 3: only ext3 and ext4 have a journal of a size mkfs sets (--fs xfs)" \
	run "${common[@]}" --fs xfs --journal 3
# a value given twice in an axis would run its cells twice under one name
expect_error "--where dom0,dom0: dom0 is given twice" run "${common[@]}" --where dom0,dom0
expect_error "--wce 1,1: 1 is given twice" run "${common[@]}" --wce 1,1
expect_error "--fs ext4 --fs ext4: ext4 is given twice" run "${common[@]}" --fs ext4 --fs ext4
expect_error "--sched none,none: none is given twice" run "${common[@]}" --sched none,none
expect_error "--atime noatime,noatime: noatime is given twice" run "${common[@]}" --atime noatime,noatime
expect_error "--atime sometimes: 'sometimes' is not one of strictatime, relatime, noatime" \
	run "${common[@]}" --atime sometimes
expect_error "--mount-opts noatime and --atime relatime: both set access times" \
	run "${common[@]}" --mount-opts noatime --atime relatime
# a results directory or a file that cannot be made or read: one line, no traceback
expect_error "--out /proc/nope: cannot create the results directory" \
	run --out /proc/nope --workdir "$tmp" --runs 1 --where raw --wce 1 --barrier 1
grep -q Traceback "$tmp/err" && fail "--out /proc/nope: a traceback"
expect_error "$tmp/none.csv: No such file or directory" parse bonnie "$tmp/none.csv"
grep -q Traceback "$tmp/err" && fail "parse of a missing file: a traceback"
printf 'where = raw\n\xff\n' > "$tmp/bin.conf"
expect_error "--config $tmp/bin.conf: not UTF-8 text (byte 12)" run "${common[@]}" --config "$tmp/bin.conf"
grep -q Traceback "$tmp/err" && fail "a config file not UTF-8: a traceback"
# gen-tree's --scale is checked as run's is (it wrote a 1-file tree for 0
# or -3, ran until killed for 1e9, gave a traceback for nan)
for s in 0 -3 1e9 nan inf; do
	expect_error "--scale $s: must be in (0, 10]" gen-tree --scale "$s" "$tmp/tree.tar"
	[ ! -e "$tmp/tree.tar" ] || fail "gen-tree --scale $s wrote a tree"
done
expect_error "--scale x: not a number" gen-tree --scale x "$tmp/tree.tar"
# parse of a file that is not text, or empty: an error, not a traceback
# or an empty success
{ printf '\377\376'; head -c 254 /dev/urandom; } > "$tmp/binary"	# 0xff: never UTF-8
for k in bonnie fsmark fsync time; do
	expect_error "$tmp/binary: not text (byte 0 is 0xff)" parse "$k" "$tmp/binary"
	grep -q Traceback "$tmp/err" && fail "parse $k of a binary file: a traceback"
done
: > "$tmp/empty"
for k in bonnie fsmark fsync time; do
	expect_error "$tmp/empty: empty: no $k output in it" parse "$k" "$tmp/empty"
done
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

# A backing file larger than any file can be: said before the first run,
# naming what sized it, not a bare "File too large" from inside it.
expect_error "a backing file of 20000000000334 MiB cannot be made in $tmp/blkbench." \
	run "${common[@]}" --where raw --wce 1 --barrier 1 --fs ext4 --workload bonnie \
	--size 9999999999999
grep -qF "(its size: what the workloads need with --size 9999999999999" "$tmp/err" ||
	fail "the backing's size not explained: $(cat "$tmp/err")"

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
