#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The short end-to-end campaign (blkcrash run --quick: ext4, 60 crash
# points) over xensim + blkbackd --record + blkfront-test export:
# 0 violations with honest flushes (FLUSH_DISKCACHE, and WRITE_BARRIER),
# and with cache=writethrough (no flush reaches the host at all),
# violations detected with blkbackd --unsafe-ignore-flush (the checker
# can fail); the same two through the 2008 disk's model (--disk2008).
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$PATH"
requires_root
requires blkcrash --help
requires mkfs.ext4 -V
requires e2fsck -V
requires losetup --version
requires losetup -f
requires test -e /dev/fuse
requires test -x "$abs_top_builddir/sim/xensim"
# the other parts must be real, not the stubs they started as
if ! blkbackd --help 2>&1 | grep -q -- '--unsafe-ignore-flush' ||
   ! blkbackd --help 2>&1 | grep -q -- '--record'; then
	echo "$0: skipped: blkbackd has no --record/--unsafe-ignore-flush yet"
	exit 77
fi
if ! blkfront-test export --help 2>&1 | grep -q -- '--log'; then
	echo "$0: skipped: blkfront-test export has no --log yet"
	exit 77
fi

d=$(mktemp -d /tmp/crash-campaign.XXXXXX)
cleanup_fn rm -rf "$d"

set +e
blkcrash run --quick --seed 1 > "$d/honest.out" 2>&1
rc=$?
set -e
cat "$d/honest.out"
[ $rc = 0 ] || fail "honest flushes: exit $rc, expected 0"
grep -q '^blkcrash: PASS: ext4, flushes honoured: 60 crash points, all fsck clean, 0 of [1-9][0-9]* acknowledged writes lost$' \
	"$d/honest.out" || fail "honest flushes: verdict line"

# the same with WRITE_BARRIER on the ring instead of FLUSH_DISKCACHE
set +e
blkcrash run --quick --seed 2 --flush-mode barrier > "$d/barrier.out" 2>&1
rc=$?
set -e
cat "$d/barrier.out"
[ $rc = 0 ] || fail "barriers: exit $rc, expected 0"
grep -q '^blkcrash: PASS: ext4, flushes honoured, flush-mode=barrier: 60 crash points' \
	"$d/barrier.out" || fail "barriers: verdict line"

# wce=0 (cache=writethrough): every write durable on completion, no
# flush reaches the host (nothing to commit), nothing lost
set +e
blkcrash run --quick --seed 3 --cache writethrough -v > "$d/wt.out" 2>&1
rc=$?
set -e
cat "$d/wt.out"
[ $rc = 0 ] || fail "writethrough: exit $rc, expected 0"
grep -q '^blkcrash: PASS: ext4, flushes honoured, cache=writethrough: 60 crash points, all fsck clean, 0 of [1-9][0-9]* acknowledged writes lost$' \
	"$d/wt.out" || fail "writethrough: verdict line"
grep -Eq '^host records / flushes +[1-9][0-9]* / 0$' "$d/wt.out" ||
	fail "writethrough: flushes reached the host"

set +e
blkcrash run --quick --seed 1 --unsafe-ignore-flush > "$d/ignored.out" 2>&1
rc=$?
set -e
cat "$d/ignored.out"
[ $rc = 1 ] || fail "ignored flushes: exit $rc, expected 1 (violations)"
grep -q '^blkcrash: VIOLATIONS: ext4, flushes IGNORED' "$d/ignored.out" ||
	fail "ignored flushes: verdict line"
# through the 2008 disk's model (blkbackd's disk2008 store below the
# recorder, the volatile cache above it): honest flushes lose nothing
# acknowledged, ignored ones are caught as before
set +e
blkcrash run --quick --seed 4 --disk2008 --volatile > "$d/d8.out" 2>&1
rc=$?
set -e
cat "$d/d8.out"
[ $rc = 0 ] || fail "disk2008: exit $rc, expected 0"
grep -q '^blkcrash: PASS: ext4, flushes honoured, volatile cache, disk2008: 60 crash points, all fsck clean, 0 of [1-9][0-9]* acknowledged writes lost$' \
	"$d/d8.out" || fail "disk2008: verdict line"
set +e
blkcrash run --quick --seed 4 --disk2008 --volatile --unsafe-ignore-flush > "$d/d8-ign.out" 2>&1
rc=$?
set -e
cat "$d/d8-ign.out"
[ $rc = 1 ] || fail "disk2008, ignored flushes: exit $rc, expected 1 (violations)"
grep -q '^blkcrash: VIOLATIONS: ext4, flushes IGNORED (--unsafe-ignore-flush), volatile cache, disk2008' \
	"$d/d8-ign.out" || fail "disk2008, ignored flushes: verdict line"
echo OK
