#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench's parsers on recorded outputs (tests/harness-data): bonnie++ 1.93c
# and 2.00a CSV lines by field, the bonnie++ human table, fs_mark rows,
# fsync-tester lines, shell time lines; and bad input -> a clear error.
. ./functions.sh
requires python3 --version
data=$top_srcdir/tests/harness-data
tmp=$(mktemp -d /tmp/harness-parsers.XXXXXX)
cleanup_fn rm -rf "$tmp"

check() {	# check NAME: compare $tmp/out with stdin
	diff -u - "$tmp/out" || fail "$1: output differs (above)"
}

blkbench parse bonnie "$data/bonnie-1.93c.csv" > "$tmp/out"
check "bonnie 1.93c" <<'X'
format=1.93c version=1.93c name=testhost size=2G blkout=191145 rewrite=95765 blkin=234814 seeks=1169 create=3951 seq_read=1842 seq_delete=15114 ran_create=4240 ran_delete=7004
Version 1.93c       ------Sequential Output------ --Sequential Input- --Random-
Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
testhost         2G  1261  97 191145  34 95765  27  2951  97 234814  22  1169  17
Latency             12375us     271ms     927ms   11581us   17640us   54677us
Version 1.93c       ------Sequential Create------ --------Random Create--------
testhost            -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
files:max:min        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
    32:100000:10/64  3951  42  1842  26 15114  87  4240  44   170   2  7004  57
Latency               622ms   19046us     156ms     543ms     106ms    1080ms
X

# 2.00a: two more fields (seeks, seek processes), skipped per-char tests
# (empty) and "+++++" (too fast to measure) both parse.
blkbench parse bonnie "$data/bonnie-2.00a.csv" > "$tmp/out"
check "bonnie 2.00a" <<'X'
format=1.98 version=2.00a name=dom0-wce0-barr size=128M blkout=12614 rewrite=9721 blkin=183012 seeks=2311 create=1841 seq_read=none seq_delete=2905 ran_create=1790 ran_delete=2210
Version 2.00a       ------Sequential Output------ --Sequential Input- --Random-
Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
dom0-wce0-barr 128M           12614  12  9721   9           183012  21  2311  44
Latency                       59886us   22123us              6835us   50426us
Version 2.00a       ------Sequential Create------ --------Random Create--------
dom0-wce0-barr      -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
files:max:min        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
                  4  1841  23 +++++ +++  2905  18  1790  22 +++++ +++  2210  17
Latency               237us     165us   32078us    4079us       5us    4081us
X

# Debian's bon_csv2txt reads the same line (the CSV blkbench writes).
if command -v bon_csv2txt >/dev/null; then
	bon_csv2txt < "$data/bonnie-2.00a.csv" | grep -q 'dom0-wce0-barr' ||
		fail "bon_csv2txt does not accept the 2.00a line"
fi

blkbench parse fsmark "$data/fsmark.out" > "$tmp/out"
check "fs_mark" <<'X'
fsuse=26 count=1000 size=65536 files_per_sec=227.7 app_overhead_us=39998
fsuse=26 count=2000 size=65536 files_per_sec=229.2 app_overhead_us=39309
FSUse% Count Size Files/sec App Overhead
26 1000 65536 227.7 39998
26 2000 65536 229.2 39309
X

blkbench parse fsync "$data/fsync.out" > "$tmp/out"
check "fsync-tester" <<'X'
fsync_n=3 fsync_max=7.7866 fsync_avg=2.68747 fsync_p50=0.2457
X

blkbench parse time "$data/time.txt" > "$tmp/out"
check "time lines" <<'X'
command='tar -xf linux-2.6.27.tar.bz2' user=36.71 system=4.22 cpu=36 real=111.58
tar -xf linux-2.6.27.tar.bz2  36.71s user 4.22s system 36% cpu 1:51.58 total
command='sync' user=0 system=0.05 cpu=0 real=12.689
sync  0.00s user 0.05s system 0% cpu 12.689 total
command='rm -rf linux-2.6.27' user=0.06 system=3.9 cpu=17 real=22.906
rm -rf linux-2.6.27  0.06s user 3.90s system 17% cpu 22.906 total
X

# The tar workload's tree: deterministic, kernel-shaped at any scale.
blkbench gen-tree --scale 0.01 "$tmp/t1.tar" > "$tmp/out"
check "gen-tree" <<'X'
280 files 20 dirs 2976098 bytes
X
blkbench gen-tree --scale 0.01 "$tmp/t2.tar" > /dev/null
cmp -s "$tmp/t1.tar" "$tmp/t2.tar" || fail "gen-tree is not deterministic"
[ "$(tar -tf "$tmp/t1.tar" | grep -c '/$')" = 20 ] || fail "gen-tree: want 20 directories"
[ "$(tar -tf "$tmp/t1.tar" | grep -vc '/$')" = 280 ] || fail "gen-tree: want 280 files"

# Bad input: a clear message naming what is wrong, exit 1.
expect_error() {	# expect_error PATTERN KIND FILE
	local rc=0
	blkbench parse "$2" "$3" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "parse $2 $3: exit $rc, want 1"
	grep -q -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "parse $2: no '$1' in the error"; }
}
echo "1.99z,1.99z,x" > "$tmp/bad.csv"
expect_error "unknown bonnie++ CSV format version '1.99z'" bonnie "$tmp/bad.csv"
sed 's/,1080ms$//' "$data/bonnie-1.93c.csv" > "$tmp/short.csv"
expect_error "format 1.93c has 47 fields, expected 48" bonnie "$tmp/short.csv"
echo "fsync time: soon" > "$tmp/bad.fsync"
expect_error "fsync-tester line not understood: 'fsync time: soon'" fsync "$tmp/bad.fsync"
echo "26 1000 65536 227.7 39998" > "$tmp/bad.fsmark"
expect_error "no fs_mark header line" fsmark "$tmp/bad.fsmark"
echo ok
