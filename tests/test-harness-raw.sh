#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A tiny matrix end to end on the host baseline (where=raw: loop on the
# backing file, no FUSE, no ring): 2 cells x 1 run of real bonnie++ on
# ext4, then fsmark and tar/rm, and every output file checked.
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
requires command -v bonnie++
tmp=$(mktemp -d /tmp/harness-raw.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
res=$tmp/res

blkbench run --out "$res" --workdir "$tmp" --runs 1 --where raw --wce 1 --barrier 1,0 \
	--fs ext4 --chunk 4096 --bonnie-seeks 0 --bonnie-fsync 1 $SMALL_BONNIE > "$tmp/out" 2> "$tmp/err" ||
	{ cat "$tmp/err"; fail "bonnie run failed"; }
assert_clean "$tmp"
# stdout: each run's bonnie++ table, then the seed table.
grep -qx 'name                   blkout   create' "$tmp/out" || fail "no seed table header"
grep -qE '^raw-wce1-barrier1 +([0-9]+|-) +([0-9]+|-)$' "$tmp/out" || fail "no barrier1 row"
grep -qE '^raw-wce1-barrier0 +([0-9]+|-) +([0-9]+|-)$' "$tmp/out" || fail "no barrier0 row"
[ "$(grep -c '^Version 2.00a ' "$tmp/out")" = 4 ] || fail "want 2 bonnie++ tables"
# stderr: a progress line per run.
grep -qF '[cell 1/2 run 1/1] raw-wce1-barrier1: elapsed' "$tmp/err" || fail "no progress line 1"
grep -qF '[cell 2/2 run 1/1] raw-wce1-barrier0: elapsed 0:' "$tmp/err" || fail "no progress line 2"
# results.csv/json: one row per run, with knobs, metrics and environment.
[ "$(wc -l < "$res/results.csv")" = 3 ] || fail "results.csv: want header + 2 rows"
python3 - "$res/results.json" <<'PY' || fail "results.json content"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert len(runs) == 2, runs
assert [r["mount_opts"] for r in runs] == ["barrier=1", "barrier=0"], runs
for r in runs:
    assert r["where"] == "raw" and r["wce"] == 1 and r["fs"] == "ext4"
    assert r["loop_dio"] == 1 and r["mem_mib"] == 32 and r["size_mib"] == 64
    assert r["loop_write_cache"] == "write back", r   # wce 1: a volatile cache
    assert r["prefill"] == "sparse", r                 # the default
    assert r["cgroup"] in ("v1", "v2") and 0 < r["cgroup_peak_mib"] <= 32, r
    assert r["seeks"] is None or r["seeks"] > 0
    assert r["kernel"] and r["git_rev"] and r["tool_bonnie++"]
assert d["meta"]["tools"]["bonnie++"]
PY
# bon_csv2txt accepts the bonnie++ CSV.
[ "$(wc -l < "$res/bonnie.csv")" = 2 ] || fail "bonnie.csv: want 2 lines"
if command -v bon_csv2txt >/dev/null; then
	bon_csv2txt < "$res/bonnie.csv" > "$tmp/bon.txt" || fail "bon_csv2txt refused bonnie.csv"
	grep -q 'raw-wce1-barrie' "$tmp/bon.txt" || fail "bon_csv2txt output has no run"
fi
grep -q 'results.csv' "$res/index.html" || fail "index.html does not link results.csv"
[ -s "$res/raw/raw-wce1-barrier1-run1/bonnie.csv" ] || fail "raw bonnie++ output missing"
# --chunk and --bonnie-fsync reached bonnie++ (its 2.00a CSV leaves
# chunk_size empty, so the command is what says so)
grep -qE 'bonnie\+\+ .*-s 64:4096:0 .* -f -b$' "$res/raw/raw-wce1-barrier1-run1/commands.log" ||
	{ cat "$res/raw/raw-wce1-barrier1-run1/commands.log"; fail "no bonnie++ -s 64:4096:0 ... -b"; }
# --bonnie-seeks 0: bonnie++ made no seeks (its CSV's seek count is 0, the
# seek phase's rate and latency are empty) and blkbench reports none
python3 - "$res/raw/raw-wce1-barrier1-run1/bonnie.csv" "$res/results.json" <<'PY' ||
import json, sys
f = open(sys.argv[1]).read().strip().splitlines()[-1].split(",")
assert f[0] == "1.98" and f[7] == "0", f[:9]
assert all(r["seeks"] is None for r in json.load(open(sys.argv[2]))["runs"])
PY
	fail "--bonnie-seeks 0 did not reach bonnie++"

# fsmark and tar on one cell.
# (from a config file; the command line overrides it: --runs)
cat > "$tmp/bench.conf" <<'CONF'
# blkbench config: keys are the long options
where = raw
wce = 1
barrier = 1
fs = ext3:data=journal
mount-opts = noatime
workload = fsmark,tar
fsmark_files = 20   # underscores work too
loops = 2
scale = 0.005
mem = 32
disk = 300
runs = 5
prefill = zero
CONF
blkbench run --config "$tmp/bench.conf" --runs 1 --out "$tmp/res2" --workdir "$tmp" \
	> "$tmp/out2" 2> "$tmp/err2" ||
	{ cat "$tmp/err2"; fail "fsmark,tar run failed"; }
assert_clean "$tmp"
grep -qE '^ +[0-9]+ +40 +65536 +[0-9.]+ +[0-9]+$' "$tmp/out2" || fail "no fs_mark row for Count 40"
grep -qE '^tar -xf linux-tree-0.005.tar  [0-9.]+s user [0-9.]+s system [0-9]+% cpu [0-9:.]+ total$' \
	"$tmp/out2" || fail "no tar time line"
grep -qE '^rm -rf linux-tree  [0-9.]+s user' "$tmp/out2" || fail "no rm time line"
grep -qE '^raw-wce1-barrier1-fsmark +[0-9.]+ +[0-9]+$' "$tmp/out2" || fail "no fsmark summary row"
grep -qE '^raw-wce1-barrier1-tar +[0-9.]+ +[0-9.]+$' "$tmp/out2" || fail "no tar summary row"
python3 - "$tmp/res2/results.json" <<'PY' || fail "results.json (fsmark, tar)"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["workload"] for r in runs] == ["fsmark", "tar"], runs
assert runs[0]["files_per_sec"] > 0 and runs[0]["mount_opts"] == "data=journal,barrier=1,noatime"
assert runs[1]["tar_s"] > 0 and runs[1]["rm_sync_s"] >= 0
assert [r["prefill"] for r in runs] == ["zero", "zero"], runs
PY
# --prefill zero: every block of the backing written before the run
for l in "$tmp"/res2/raw/*/commands.log; do
	grep -qE '^# backing .*/backing.img: 300 MiB, zero, 30[0-9] MiB allocated' "$l" ||
		fail "$l: the backing was not zero-filled"
done
# Plots (when gnuplot is here) of the measured metrics, and the HTML
# report linking them.
if command -v gnuplot >/dev/null; then
	for m in files_per_sec tar_s rm_s; do
		[ -s "$tmp/res2/plots/$m.svg" ] && [ -s "$tmp/res2/plots/$m.png" ] || fail "no $m plot"
		grep -qF "plots/$m.svg" "$tmp/res2/index.html" || fail "index.html lacks plots/$m.svg"
	done
	file "$tmp/res2/plots/tar_s.png" | grep -q 'PNG image' || fail "tar_s.png is not a PNG"
fi
echo ok
