#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# XFS through the ring: domU cells (xensim + blkbackd + blkfront-test
# export) with --fs xfs, wce 1 and 0, barrier 1 (XFS always flushes since
# Linux 4.19).  mkfs.xfs, mount and bonnie++ run on blocks that went
# through blkbackd; on wce1 XFS's flushes reached the ring (the export
# counted them), on wce0 blkbackd offered none and the guest sent none.
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
requires command -v bonnie++
requires command -v fusermount3
requires command -v mkfs.xfs
# A where that cannot run here skips (77); one that runs but loses I/O
# fails the test.
rc=0; out=$(blkbench probe --io domU 2>&1) || rc=$?
case $rc in
0) ;;
77) echo "$0: skipped: $out"; exit 77 ;;
*) fail "blkbench probe --io domU: $out" ;;
esac
tmp=$(mktemp -d /tmp/harness-xfs.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
res=$tmp/res
# mkfs.xfs wants at least 300 MiB
blkbench run --out "$res" --workdir "$tmp" --runs 1 --where domU --wce 1,0 --barrier 1 \
	--fs xfs --mem 32 --size 64 --files 1 --disk 400 --timeout 300 \
	> "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "run failed"; }
assert_clean "$tmp"
for c in domU-wce1-barrier1 domU-wce0-barrier1; do
	grep -qE "^$c +([0-9]+|-) +([0-9]+|-)\$" "$tmp/out" || { cat "$tmp/out"; fail "no $c row"; }
done
python3 - "$res" <<'PY' || fail "results.json"
import json, os, sys
res = sys.argv[1]
runs = json.load(open(os.path.join(res, "results.json")))["runs"]
assert [(r["where"], r["wce"], r["fs"]) for r in runs] == [("domU", 1, "xfs"), ("domU", 0, "xfs")], runs
for r in runs:
    assert r["mounted_opts"].startswith("rw"), r
    stats = dict(l.strip().split("=") for l in
                 open(os.path.join(res, "raw", r["cell"] + "-run1", "export.stats")))
    assert int(stats["writes"]) > 0, (r["cell"], stats)
    if r["wce"] == 1:
        assert r["feature_flush_cache"] == 1 and int(stats["flushes"]) > 0, (r["cell"], stats)
    else:
        assert r["feature_flush_cache"] == 0 and int(stats["flushes"]) == 0, (r["cell"], stats)
PY
echo ok
