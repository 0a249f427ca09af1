#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench crash's judge, without Xen: a recorded console of the nested
# campaign (tests/harness-data/xen-nested-campaign.console, the @@ lines of a
# real boot) must PASS with its table; the same console with one
# honouring round turned into a violation, with a round cut, or without
# its ALL-DONE mark must FAIL naming the round; xen-host's checks must
# refuse on this machine (not a dom0) naming what is missing, touching
# nothing; options of the other platform are refused.
. ./functions.sh
requires python3 --version
data=$top_srcdir/tests/harness-data/xen-nested-campaign.console
tmp=$(mktemp -d /tmp/harness-crash.XXXXXX)
cleanup_fn rm -rf "$tmp"

judge() {	# judge WANT-RC CONSOLE [ARGS...]: output in $tmp/out
	local want=$1 console=$2 rc=0
	shift 2
	blkbench crash --platform xen-nested --console "$console" "$@" > "$tmp/out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || { cat "$tmp/out"; fail "crash --console $console: exit $rc, want $want"; }
}
has() {	# has PATTERN: $tmp/out has a line matching PATTERN (grep -E)
	grep -qE -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "no line matching /$1/"; }
}

# 1. the recorded campaign: 11 rounds, 5 caught, 6 clean
judge 0 "$data" --out "$tmp/res"
has '^power-cut campaign on xen-nested: PASS: 11 rounds expected, 5 caught as they must be, 6 clean as they must be, 0 wrong or missing$'
[ "$(grep -c '^blkbackd  \|^kernel xen-blkback \|^QEMU qdisk ' "$tmp/out")" = 11 ] ||
	{ cat "$tmp/out"; fail "the table has not 11 rows"; }
has '^kernel xen-blkback \(phy:\) +flushes honoured +blkfront-verify +[0-9]+ rec, [0-9]+ fl +[0-9]+ flushes, [0-9]+ promised +0 lost +- +pass +pass '
has '^blkbackd +--unsafe-ignore-flush +blkfront-verify .* [1-9][0-9]* lost +- +caught +CAUGHT '
has '^kernel xen-blkback \(phy:\) +guest mounts -o nobarrier +ext4-nobarrier .* ([1-9][0-9]*) of \1 files lost .* caught +CAUGHT '
has '^QEMU qdisk +guest mounts -o nobarrier +ext4-nobarrier .* [1-9][0-9]* of 64 +caught +CAUGHT '
python3 - "$tmp/res/results.json" <<'EOF' || fail "results.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is True and r["problems"] == [], r["problems"]
assert [x["name"] for x in r["rounds"]] == r["expected_rounds"], r["expected_rounds"]
assert all(x["verdict"] in ("pass", "caught") for x in r["rounds"])
assert sum(s["result"] == "PASS" for s in r["steps"]) >= 33, len(r["steps"])
EOF
[ -s "$tmp/res/table.txt" ] || fail "no table.txt"

# 2. kernel blkback losing promised writes: the verdict FAIL must fail
#    the campaign, naming the round
sed 's/\(@@LW name=kb .*\)verdict=pass\(.*\)lost=0/\1verdict=FAIL\2lost=7/' "$data" > "$tmp/kb-lost.log"
cmp -s "$data" "$tmp/kb-lost.log" && fail "the kb round was not edited"
judge 1 "$tmp/kb-lost.log"
has '^FAIL: round kb \(kernel-blkback, honoured, blkfront-verify\): verdict FAIL, must be pass$'
has 'power-cut campaign on xen-nested: FAIL: .* 1 wrong or missing$'

# 3. a round that never printed its line (a boot cut short) fails too
grep -v '@@LW name=qfn ' "$data" > "$tmp/cut.log"
judge 1 "$tmp/cut.log"
has '^FAIL: round qfn: no result on the console'

# 4. no ALL-DONE: the recorded run did not finish
grep -v 'ALL-DONE' "$data" > "$tmp/unfinished.log"
judge 1 "$tmp/unfinished.log"
has '^FAIL: the recorded run did not finish'

# 5. a round the campaign does not know is not ignored
sed 's/@@LW name=bbd /@@LW name=zzz /' "$data" > "$tmp/extra.log"
judge 1 "$tmp/extra.log"
has '^FAIL: round zzz: not one of this campaign'

# 6. xen-host on this machine (no Xen): refused before anything is
#    touched, every missing thing listed; a file given as --data is left
#    as it was
if [ ! -e /proc/xen/capabilities ]; then
	head -c 1M /dev/urandom > "$tmp/data.img"
	sum=$(md5sum < "$tmp/data.img")
	rc=0
	blkbench crash --platform xen-host --data "$tmp/data.img" --log /dev/null \
		--out "$tmp/host" > "$tmp/out" 2>&1 || rc=$?
	[ "$rc" = 1 ] || { cat "$tmp/out"; fail "xen-host: exit $rc, want 1"; }
	has 'platform xen-host cannot run here; missing:'
	has 'not running on Xen: /proc/xen/capabilities is missing'
	has "--data $tmp/data.img: not a block device"
	has '--log /dev/null: not a block device'
	[ "$(md5sum < "$tmp/data.img")" = "$sum" ] || fail "xen-host changed --data"
	[ ! -e "$tmp/host" ] || fail "xen-host made its results directory before refusing"
fi

# 7. a platform's options on another
rc=0
blkbench crash --platform xen-nested --data /dev/sdz > "$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && has 'are for --platform xen-host' || { cat "$tmp/out"; fail "--data on xen-nested: exit $rc"; }
rc=0
blkbench crash --platform xen-nested --quick > "$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && has '--quick is for --platform sim' || { cat "$tmp/out"; fail "--quick on xen-nested: exit $rc"; }
echo ok
