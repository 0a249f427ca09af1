#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tiny matrix through the real stack: one domU cell (xensim + blkbackd
# + blkfront-test export: real bonnie++ on ext4 whose blocks go through
# blkbackd's ring) and one dom0 cell (the direct FUSE export), 1 run each,
# small sizes.  Everything torn down after: no mount, no loop device, no
# daemon left.
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
requires command -v bonnie++
requires command -v fusermount3
# The stack must start and carry I/O (ext4, dd 64 MiB, sync, read back)
# before a benchmark through it means anything.
# A where that cannot run here skips (77); one that runs but loses I/O
# fails the test.
rc=0; out=$(blkbench probe --io dom0,domU 2>&1) || rc=$?
case $rc in
0) ;;
77) echo "$0: skipped: $out"; exit 77 ;;
*) fail "blkbench probe --io dom0,domU: $out" ;;
esac
tmp=$(mktemp -d /tmp/harness-e2e.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
res=$tmp/res

blkbench run --out "$res" --workdir "$tmp" --runs 1 --where domU,dom0 --wce 1,0 --barrier 1 \
	--fs ext4 $SMALL_BONNIE --timeout 120 > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "run failed"; }
assert_clean "$tmp"
if pgrep -f "$tmp/" >/dev/null; then
	pgrep -af "$tmp/"
	fail "processes of the stack left running (above)"
fi
# The cells that differ only in where run back to back (the two runs a
# domU/dom0 ratio divides), the other way round in the next round.
order=$(sed -n 's/^blkbench: \[cell [0-9]*\/4 run 1\/1\] \([a-zU0-9-]*\): elapsed.*/\1/p' "$tmp/err" | tr '\n' ' ')
[ "$order" = "domU-wce1-barrier1 dom0-wce1-barrier1 domU-wce0-barrier1 dom0-wce0-barrier1 " ] ||
	fail "run order: $order"
PYTHONPATH=$top_srcdir/harness python3 - <<'PY' || fail "round order"
from blkbenchlib.cli import _round_order
from blkbenchlib.matrix import Cell, FsSpec
cells = [Cell(w, c, 1, FsSpec.parse("ext4"), "", "bonnie", "%s-wce%d" % (w, c))
         for w in ("domU", "dom0") for c in (1, 0)]
for r, want in ((1, [1, 3, 2, 4]), (2, [3, 1, 4, 2]), (3, [1, 3, 2, 4])):
    got = [k for k, _ in _round_order(cells, r)]
    assert got == want, (r, got)
PY
for c in domU-wce1 domU-wce0 dom0-wce1 dom0-wce0; do
	grep -qE "^$c-barrier1 +([0-9]+|-) +([0-9]+|-)\$" "$tmp/out" || fail "no $c-barrier1 row"
done
# The guest disk's write cache per cell: dom0 from wce (hdparm -W0 ->
# write through); domU from what blkbackd advertised with flush-mode=auto
# (Linux blkback: flush-cache only over a volatile cache), as blkfront
# sets it.
python3 - "$res/results.json" "$top_srcdir/harness" <<'PY' || fail "results.json"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = [(r["where"], r["wce"], r["loop_write_cache"], r.get("flush_mode"),
        r.get("feature_flush_cache"), r.get("feature_barrier")) for r in runs]
assert got == [("domU", 1, "write back", "auto", 1, 0),
               ("dom0", 1, "write back", None, None, None),
               ("domU", 0, "write through", "auto", 0, 0),
               ("dom0", 0, "write through", None, None, None)], got
for r in runs:
    assert r["loop_dio"] == 1, r
    assert r["tool_blkfront-test"] != "unknown", r
# every run's filesystem has the same directory hash seed, so bonnie++'s
# directory lands in the same block group (dumpe2fs -h of the guest disk)
sys.path.insert(0, sys.argv[2])
from blkbenchlib.matrix import EXT_HASH_SEED
assert [r["ext_hash_seed"] for r in runs] == [EXT_HASH_SEED] * 4, runs
PY
grep -qx "# guest disk write_cache write through: flush-mode=auto: blkbackd advertised feature-flush-cache=0 feature-barrier=0" \
	"$res/raw/domU-wce0-barrier1-run1/commands.log" || fail "commands.log: no write_cache line for domU wce0"
grep -q "flush-mode=auto: the backing has no volatile write cache" \
	"$res/raw/domU-wce0-barrier1-run1/blkbackd.log" || fail "blkbackd.log: no auto line for wce0"
[ -s "$res/raw/domU-wce1-barrier1-run1/blkbackd.log" ] || fail "blkbackd's log not kept"
[ -s "$res/raw/domU-wce1-barrier1-run1/export.stats" ] || fail "the export's counters not kept"

no_stack_left() {
	assert_clean "$tmp" "${1:-}"
	if pgrep -f "$tmp/" >/dev/null; then
		pgrep -af "$tmp/"
		fail "processes of the stack left running (above)"
	fi
}

# A mount option the kernel refuses, through the ring: named, and the
# whole stack (export, blkbackd, xensim) gone.
rc=0
blkbench run --out "$tmp/res-bad" --workdir "$tmp" --runs 1 --where domU --wce 1 --barrier 1 \
	--fs ext4 --mount-opts bogus_opt_blkbench $SMALL_BONNIE > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "mount -t ext4 -o barrier=1,bogus_opt_blkbench" "$tmp/err" ||
	{ cat "$tmp/err"; fail "domU bad mount option: rc $rc"; }
no_stack_left

# blkbench ceiling: fio on both stacks' bare disks in turn; a summary line
# per job, one run per stack that moved data (at least 1 MB/s), nothing
# left behind.  (How the two compare is a benchmark's: BENCHMARKS.md.)
blkbench ceiling --rounds 1 --seconds 1 --disk 128 --workdir "$tmp" > "$tmp/out" 2> "$tmp/err" ||
	{ cat "$tmp/err"; fail "ceiling failed"; }
mbps='[1-9][0-9]*\.[0-9] MB/s'
for j in write-128k-qd32 read-128k-qd32 randread-4k-qd32 randwrite-4k-qd1; do
	grep -qE "^$j +dom0 +$mbps +domU +$mbps +domU/dom0 [0-9]+\.[0-9]{3} +dom0 ahead in [01] of 1 pairs\$" "$tmp/out" ||
		{ cat "$tmp/out"; fail "ceiling: no summary for $j"; }
	[ "$(grep -cE "^$j round 1 dom0 $mbps\$" "$tmp/out") $(grep -cE "^$j round 1 domU $mbps\$" "$tmp/out")" = "1 1" ] ||
		{ cat "$tmp/out"; fail "ceiling: not one run per stack for $j"; }
done
no_stack_left
rc=0
blkbench ceiling --rounds 0 > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "rounds and --seconds must be at least 1" "$tmp/err" ||
	{ cat "$tmp/err"; fail "ceiling --rounds 0: rc $rc"; }

# Ctrl-C while bonnie++ runs through the ring.
blkbench run --out "$tmp/res-int" --workdir "$tmp" --runs 1 --where domU --wce 1 --barrier 1 \
	--fs ext4 $SMALL_BONNIE --size 512 --disk 700 > "$tmp/out" 2> "$tmp/err" &
pid=$!
wait_for 60 grep -qF "$tmp/blkbench." /proc/mounts || { kill $pid; fail "no mount within 60 s"; }
wait_for 30 pgrep -f "bonnie.*$tmp/" >/dev/null || { kill $pid; fail "bonnie++ did not start"; }
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" = 130 ] || { cat "$tmp/err"; fail "SIGINT: exit $rc, want 130"; }
no_stack_left "$pid"
echo ok
