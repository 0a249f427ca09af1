#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The scheduler and access-time axes through the ring: domU cells (xensim
# + blkbackd + blkfront-test export) for --sched none,mq-deadline x
# --atime strictatime,noatime, real bonnie++ on ext4.  Each run's guest
# disk has the scheduler its cell names, each mount the access-time mode
# the kernel reports, every block went through the ring (the export
# counted writes), the table and the ratios name the axes, and nothing is
# left behind.  It also gives the two knobs the 2008 disk's demo sets:
# the filesystem of every run has the journal --journal asked for (its
# superblock says so), and bonnie++ ran with the seed --bonnie-seed gave
# and the directories --bonnie-dirs gave (its own CSV line says so).
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
requires command -v bonnie++
requires command -v fusermount3
# A where that cannot run here skips (77); one that runs but loses I/O
# fails the test.
rc=0; out=$(blkbench probe --io domU 2>&1) || rc=$?
case $rc in
0) ;;
77) echo "$0: skipped: $out"; exit 77 ;;
*) fail "blkbench probe --io domU: $out" ;;
esac
loop=$(losetup -f) && scheds=$(cat /sys/block/${loop#/dev/}/queue/scheduler 2>/dev/null) || scheds=
case "$scheds" in
*mq-deadline*) ;;
*) echo "$0: skipped: loop devices offer no mq-deadline scheduler here (${scheds:-none})"; exit 77 ;;
esac
tmp=$(mktemp -d /tmp/harness-axes.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
res=$tmp/res

blkbench run --out "$res" --workdir "$tmp" --runs 1 --where domU --wce 1 --barrier 1 \
	--fs ext4 --sched none,mq-deadline --atime strictatime,noatime $SMALL_BONNIE \
	--journal 2 --bonnie-seed 7 --bonnie-dirs 3 \
	> "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "run failed"; }
assert_clean "$tmp"
for c in none-strictatime none-noatime mq-deadline-strictatime mq-deadline-noatime; do
	grep -qE "^domU-wce1-barrier1-$c +([0-9]+|-) +([0-9]+|-)\$" "$tmp/out" ||
		{ cat "$tmp/out"; fail "no domU-wce1-barrier1-$c row"; }
done
python3 - "$res" <<'PY' || fail "results.json"
import json, os, sys
res = sys.argv[1]
runs = json.load(open(os.path.join(res, "results.json")))["runs"]
assert len(runs) == 4, runs
for r in runs:
    sched, atime = r["cell"].split("-barrier1-")[1].rsplit("-", 1)
    assert r["where"] == "domU" and r["flush_mode"] == "auto", r
    assert r["sched"] == sched, (r["cell"], r["sched"])       # the one in use
    assert r["atime"] == atime, r
    opts = r["mounted_opts"].split(",")                       # what the kernel applied
    if atime == "noatime":
        assert "noatime" in opts, opts
    else:
        assert "noatime" not in opts and "relatime" not in opts, opts
    stats = dict(l.strip().split("=") for l in
                 open(os.path.join(res, "raw", r["cell"] + "-run1", "export.stats")))
    assert int(stats["writes"]) > 0, (r["cell"], stats)      # through the ring
    assert r["journal_mib"] == 2, (r["cell"], r["journal_mib"])  # dumpe2fs -h
    csv = open(os.path.join(res, "raw", r["cell"] + "-run1", "bonnie.csv")).read()
    assert csv.split(",")[4] == "7", (r["cell"], csv)          # bonnie++'s seed field
    assert csv.split(",")[25] == "3", (r["cell"], csv)         # its num_dirs field
PY
# a ratio between axis values, when both cells were timed, warns that a
# single run shows no spread; a "-" cell comes with the line saying why
if grep -qE "^(mq-deadline/none|noatime/strictatime) " "$tmp/out"; then
	grep -q "^warning: 1 run per cell" "$tmp/out" || fail "no warning for a single run"
fi
if grep -qE "^domU-wce1-barrier1-.* -( |\$)" "$tmp/out"; then
	grep -q "^-: bonnie++ printed +++++" "$tmp/out" || fail "a '-' cell without the line saying why"
fi
echo ok
