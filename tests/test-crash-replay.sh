#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkcrash replay of hand-built crash logs gives byte-exact images:
# durable-only, everything the host saw, random subsets of the unflushed
# writes, and a torn log tail is ignored.
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$abs_top_builddir/tests:$PATH"
requires blkcrash --help
requires cmp --version

d=$(mktemp -d /tmp/crash-replay.XXXXXX)
cleanup_fn rm -rf "$d"

# put FILE OFFSET LEN BYTE: LEN bytes equal to BYTE at OFFSET
put() {
	head -c "$3" /dev/zero | tr '\0' "\\$(printf %o "$4")" |
		dd of="$1" bs=64k seek="$2" oflag=seek_bytes conv=notrunc status=none
}
blank() { rm -f "$1"; truncate -s 65536 "$1"; }

mkcrashlog "$d/log" <<'SCRIPT'
dev 65536
W 0 4096 65
W 4096 4096 66
F
W 0 1024 67
D 8192 4096
W 8192 512 68
F
W 512 512 69
W 16384 4096 70
tear 100
SCRIPT
# records: 1 W A, 2 W B, 3 F, 4 W C, 5 D, 6 W D8, 7 F, 8 W 69; 9 torn

blkcrash dump "$d/log" > "$d/dump"
cat "$d/dump"
grep -q '^8 WRITE offset=512 len=512 .*durable=never$' "$d/dump" || fail "dump: record 8"
grep -q '^4 WRITE offset=0 len=1024 .*durable=7$' "$d/dump" || fail "dump: record 4"
grep -q '^# 8 records, 2 flushes, 4060 bytes ignored at the tail$' "$d/dump" ||
	fail "dump: the torn record 9 must be ignored"

# after flush 1, durable only: A, B
blank "$d/want"; put "$d/want" 0 4096 65; put "$d/want" 4096 4096 66
blank "$d/img"
blkcrash replay "$d/log" "$d/img" --flush 1 --durable
cmp "$d/img" "$d/want" || fail "flush 1 durable"

# up to record 6, durable only: still A, B (4..6 are not flushed yet)
blank "$d/img"
blkcrash replay "$d/log" "$d/img" --upto 6 --durable
cmp "$d/img" "$d/want" || fail "upto 6 durable"

# after flush 2: C over A's first 1024 bytes, discard, then 68
put "$d/want" 0 1024 67; put "$d/want" 8192 512 68
blank "$d/img"
blkcrash replay "$d/log" "$d/img" --flush 2 --durable
cmp "$d/img" "$d/want" || fail "flush 2 durable"

# everything the host saw (the default): + 69
cp "$d/want" "$d/flushed"
put "$d/want" 512 512 69
blank "$d/img"
blkcrash replay "$d/log" "$d/img"
cmp "$d/img" "$d/want" || fail "everything"

# an image file that does not exist yet is created sparse
blkcrash replay "$d/log" "$d/new.img"
cmp "$d/new.img" "$d/want" || fail "created image"

# subsets: always the flushed image, with or without 69; both happen
with=0 without=0
for seed in $(seq 1 24); do
	blank "$d/img"
	blkcrash replay "$d/log" "$d/img" --subset "$seed" > /dev/null
	if cmp -s "$d/img" "$d/want"; then
		with=$((with + 1))
	elif cmp -s "$d/img" "$d/flushed"; then
		without=$((without + 1))
	else
		fail "subset seed $seed: neither flushed nor flushed+69"
	fi
done
echo "subsets: $with with the unflushed write, $without without"
[ "$with" -gt 0 ] && [ "$without" -gt 0 ] || fail "subsets are not random"

# newest wins whatever order records become durable in: a FUA write
# durable at once, an older overlapping write flushed later
mkcrashlog "$d/log2" <<'SCRIPT'
dev 65536
W 0 4096 1
W 0 4096 2 fua
F
SCRIPT
blank "$d/want"; put "$d/want" 0 4096 2
blank "$d/img"
blkcrash replay "$d/log2" "$d/img" --durable
cmp "$d/img" "$d/want" || fail "an older write flushed later overwrote a FUA write"

# a failed flush makes nothing durable
mkcrashlog "$d/log3" <<'SCRIPT'
dev 65536
W 0 4096 1
FX
SCRIPT
blank "$d/img"
blkcrash replay "$d/log3" "$d/img" --durable
blank "$d/want"
cmp "$d/img" "$d/want" || fail "a failed flush made a write durable"

# not a crash log: a clear error, exit 2
echo garbage > "$d/bad"
set +e
blkcrash replay "$d/bad" "$d/img" 2> "$d/err"
rc=$?
set -e
[ $rc = 2 ] && grep -q "not a crash log" "$d/err" || fail "bad log: rc=$rc $(cat "$d/err")"
echo OK
