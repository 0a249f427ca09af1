#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench's barrier table with the domU rows on RBD beside the dom0 rows
# on a file: --backing rbd:POOL/IMAGE:conf=... on --platform sim, a tiny
# matrix (bonnie++ on ext4, wce 1 and 0, barrier 1, one run each).  The
# domU rows' results say backing=rbd and what blkbackd advertised for
# librbd's cache: flush on wce1 (writeback), none on wce0 (rbd_cache off).
# Run by check-ceph.sh.
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
[ "${BK_STORE:-}" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
requires_root
requires python3 --version
requires command -v bonnie++
requires command -v fusermount3
tmp=$(mktemp -d /tmp/rbd-blkbench.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
cleanup_fn timeout 60 rbd -c "$CEPH_CONF" rm --no-progress "$CEPH_POOL/blkbench$$"
res=$tmp/res
blkbench run --out "$res" --workdir "$tmp" --runs 1 --where domU,dom0 --wce 1,0 --barrier 1 \
	--backing "rbd:$CEPH_POOL/blkbench$$:conf=$CEPH_CONF" \
	--fs ext4 $SMALL_BONNIE > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "run failed"; }
cat "$tmp/out"
assert_clean "$tmp"
for c in domU-wce1 domU-wce0 dom0-wce1 dom0-wce0; do
	grep -qE "^$c-barrier1 +([0-9]+|-) +([0-9]+|-)\$" "$tmp/out" || fail "no $c-barrier1 row"
done
python3 - "$res/results.json" <<'PY' || fail "results.json"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = [(r["where"], r["wce"], r["backing"], r["loop_write_cache"], r.get("feature_flush_cache"))
       for r in runs]
# one round: each wce's domU and dom0 runs back to back, domU first
assert got == [("domU", 1, "rbd", "write back", 1),
               ("dom0", 1, "file", "write back", None),
               ("domU", 0, "rbd", "write through", 0),
               ("dom0", 0, "file", "write through", None)], got
PY
grep -q "rbd $CEPH_POOL/blkbench$$: .* bytes, librbd cache writeback" \
	"$res/raw/domU-wce1-barrier1-run1/blkbackd.log" || fail "wce1 run was not on the RBD image"
grep -q "rbd $CEPH_POOL/blkbench$$: .* bytes, no volatile cache" \
	"$res/raw/domU-wce0-barrier1-run1/blkbackd.log" || fail "wce0 run was not on the RBD image without cache"
exit 0
