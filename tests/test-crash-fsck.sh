#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkcrash fsck on a hand-made ext4 history: debugfs writes files into a
# copy of a fresh filesystem; the changed blocks become a crash log.
# Flushed at the end: every flush point is fsck-clean.  Never flushed
# (a backend that ignores flushes): random crash points keep random
# subsets of the metadata blocks and e2fsck must catch them.
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$abs_top_builddir/tests:$PATH"
requires blkcrash --help
requires mkfs.ext4 -V
requires debugfs -V
requires e2fsck -V

d=$(mktemp -d /tmp/crash-fsck.XXXXXX)
cleanup_fn rm -rf "$d"

truncate -s 16M "$d/base.img"
mkfs.ext4 -q -F -b 4096 "$d/base.img"
cp "$d/base.img" "$d/final.img"
head -c 300000 /dev/urandom > "$d/data"
debugfs -w "$d/final.img" -R "mkdir dir" >/dev/null 2>&1
for i in 1 2 3 4 5 6; do
	debugfs -w "$d/final.img" -R "write $d/data dir/f$i" >/dev/null 2>&1
done
e2fsck -fn "$d/final.img" >/dev/null || fail "debugfs made an unclean filesystem"

printf 'dev 16777216\ndiff %s %s 7\nF\n' "$d/base.img" "$d/final.img" |
	mkcrashlog "$d/flushed.log"
printf 'dev 16777216\ndiff %s %s 7\n' "$d/base.img" "$d/final.img" |
	mkcrashlog "$d/unflushed.log"
blkcrash dump "$d/flushed.log" | tail -1

blkcrash fsck "$d/flushed.log" "$d/base.img" --fs ext4 --no-random --points 5 \
	> "$d/ok.out" || { cat "$d/ok.out"; fail "flushed: fsck must be clean"; }
cat "$d/ok.out"
grep -q "^fsck: 1 crash points (1 flush points, 0 random.*1 clean, 0 not clean: ok" \
	"$d/ok.out" || fail "flushed: summary"

set +e
blkcrash fsck "$d/unflushed.log" "$d/base.img" --fs ext4 --points 12 --seed 5 \
	--max-report 3 > "$d/bad.out"
rc=$?
set -e
cat "$d/bad.out"
[ $rc = 1 ] || fail "unflushed: exit $rc, expected 1 (violations)"
grep -q "^FSCK FAILED: crash point after host record [0-9]* (random subset" \
	"$d/bad.out" || fail "unflushed: no failing point reported"
# the base image is untouched
mkfs_base=$(mktemp "$d/x.XXXX"); rm -f "$mkfs_base"
e2fsck -fn "$d/base.img" >/dev/null || fail "base image modified"
echo OK
