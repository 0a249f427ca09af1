#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkcrash on Linux dm-log-writes logs (harness/crash/dmlog.c), built by
# mkdmlog.py: dump decodes writes, flushes, FUA, discards, marks and a
# flush with data; replay gives byte-exact images at flush points, marks
# and the end; a torn tail is read up to the last whole entry; hostile
# headers are clear errors; check passes an honest log and catches a
# flush logged before an acknowledged write's data, an ignored flush and
# an ignored FUA; fsck judges an ext4 history; the fuzz seeds replay.
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$abs_top_builddir/tests:$PATH"
requires blkcrash --help
requires python3 --version
requires cmp --version

d=$(mktemp -d /tmp/crash-dmlog.XXXXXX)
cleanup_fn rm -rf "$d"
mkdmlog() { python3 "$abs_top_srcdir/tests/mkdmlog.py" "$@"; }

# put FILE OFFSET LEN BYTE: LEN bytes equal to BYTE at OFFSET
put() {
	head -c "$3" /dev/zero | tr '\0' "\\$(printf %o "$4")" |
		dd of="$1" bs=64k seek="$2" oflag=seek_bytes conv=notrunc status=none
}
blank() { rm -f "$1"; truncate -s 65536 "$1"; }

# ---- dump: every kind of entry, 512-byte blocks ----
cat > "$d/all.script" <<'SCRIPT'
W 0 4096 65
W 4096 4096 66 fua
W 8192 4096 68
F
W 0 1024 67
D 8192 4096
M middle
F
W 512 512 69 flush
W 16384 4096 70 fua
M dm-log-writes-end
SCRIPT
# records: 1 W A, 2 W B fua, 3 W 68, 4 F, 5 W C, 6 D, 7 MARK, 8 F,
# 9 F (the preflush of entry 8), 10 W 69, 11 W 70 fua, 12 MARK
{ cat "$d/all.script"; echo "pad 65536"; } | mkdmlog "$d/all.log"
blkcrash dump "$d/all.log" > "$d/dump"
cat "$d/dump"
want() { grep -q "$1" "$d/dump" || fail "dump: no line \"$1\""; }
want '^# dm-log-writes log .*: version 1, block 512 bytes, 11 of 11 entries read, writes reach 20480 bytes$'
want '^1 WRITE entry=0 offset=0 len=4096 hash=[0-9a-f]* durable=4$'
want '^2 WRITE entry=1 offset=4096 len=4096 hash=[0-9a-f]* fua durable=2$'
want '^5 WRITE entry=4 offset=0 len=1024 hash=[0-9a-f]* durable=8$'
want '^6 DISCARD entry=5 offset=8192 len=4096 durable=8$'
want '^7 MARK entry=6 "middle"$'
want '^9 FLUSH entry=8 covers=<9$'
want '^10 WRITE entry=8 offset=512 len=512 hash=[0-9a-f]* durable=never$'
want '^11 WRITE entry=9 offset=16384 len=4096 hash=[0-9a-f]* fua durable=11$'
want '^12 MARK entry=10 "dm-log-writes-end"$'
want '^# 12 records, 3 flushes, 0 bytes ignored at the tail$'
# the hash is the data's (as the crash log's): same data, same hash
printf 'dev 65536\nW 0 4096 65\n' | mkcrashlog "$d/ref.crashlog"
h_cl=$(blkcrash dump "$d/ref.crashlog" | sed -n 's/^1 WRITE .*hash=\([0-9a-f]*\).*/\1/p')
grep -q "^1 WRITE .*hash=$h_cl " "$d/dump" || fail "dump: hash differs from the crash log's"

# ---- replay: byte-exact images ----
replay_eq() {	# replay_eq NAME EXPECTED-IMAGE REPLAY-ARGS...
	local name=$1 exp=$2
	shift 2
	blank "$d/$name.img"
	blkcrash replay "$d/all.log" "$d/$name.img" "$@" > "$d/$name.out" ||
		fail "replay $name: exit $?"
	cat "$d/$name.out"
	cmp "$d/$name.img" "$exp" || fail "replay $name: image differs"
}
# after the first flush, durable only: A, B, 68
blank "$d/e1"; put "$d/e1" 0 4096 65; put "$d/e1" 4096 4096 66; put "$d/e1" 8192 4096 68
replay_eq flush1 "$d/e1" --flush 1 --durable
replay_eq mark-durable "$d/e1" --mark middle --durable
# at the mark, everything the host saw: C over A, the discard zeroes 68
cp "$d/e1" "$d/e2"; put "$d/e2" 0 1024 67; put "$d/e2" 8192 4096 0
replay_eq mark-all "$d/e2" --mark middle
# the end, durable only: record 10 (after the last flush, no FUA) is not
cp "$d/e2" "$d/e3"; put "$d/e3" 16384 4096 70
replay_eq end-durable "$d/e3" --durable
# the end, everything
cp "$d/e3" "$d/e4"; put "$d/e4" 512 512 69
replay_eq end-all "$d/e4"
grep -q "replayed .* to record 12 of 12 (everything the host saw)" "$d/end-all.out" ||
	fail "replay end-all: message"
# random subsets of the one write that is not durable: either outcome,
# and both are seen over a few seeds
seen3=0 seen4=0
for s in 1 2 3 4 5 6 7 8; do
	blank "$d/sub.img"
	blkcrash replay "$d/all.log" "$d/sub.img" --subset $s > /dev/null ||
		fail "replay --subset $s"
	if cmp -s "$d/sub.img" "$d/e3"; then seen3=1
	elif cmp -s "$d/sub.img" "$d/e4"; then seen4=1
	else fail "replay --subset $s: an image that no crash could leave"; fi
done
[ $seen3 = 1 ] && [ $seen4 = 1 ] || fail "replay --subset: one outcome never seen"
set +e
blkcrash replay "$d/all.log" "$d/x.img" --mark nosuch > "$d/nomark.out" 2>&1
rc=$?
set -e
[ $rc = 2 ] && grep -q 'there is no mark "nosuch"' "$d/nomark.out" || fail "replay --mark nosuch"

# 4096-byte blocks: the entry's sector and length are in blocks
mkdmlog "$d/bs4k.log" <<'SCRIPT'
bs 4096
W 8192 8192 71
F
SCRIPT
blkcrash dump "$d/bs4k.log" | tee "$d/bs4k.dump"
grep -q '^1 WRITE entry=0 offset=8192 len=8192 .*durable=2$' "$d/bs4k.dump" ||
	fail "bs4k: offset/length not in 4096-byte blocks"
blank "$d/bs4k.img"
blkcrash replay "$d/bs4k.log" "$d/bs4k.img" > /dev/null
blank "$d/e5"; put "$d/e5" 8192 8192 71
cmp "$d/bs4k.img" "$d/e5" || fail "bs4k: replay image"

# ---- a torn copy: read up to the last whole entry ----
mkdmlog "$d/torn.log" < <(cat "$d/all.script"; echo "tear 600")
blkcrash dump "$d/torn.log" > "$d/torn.dump"
tail -3 "$d/torn.dump"
grep -q '^# torn: the super block claims 11 entries, the file holds 9$' "$d/torn.dump" ||
	fail "torn: no note"
grep -q '^10 WRITE entry=8 ' "$d/torn.dump" || fail "torn: entry 8 lost"
grep -q '^11 ' "$d/torn.dump" && fail "torn: a record from a torn entry"

# ---- hostile or foreign input: a clear error, exit 2 ----
bad() {	# bad NAME MESSAGE-REGEX [--format F] < SCRIPT
	local name=$1 msg=$2 rc
	shift 2
	mkdmlog "$d/$name.log"
	set +e
	blkcrash dump "$@" "$d/$name.log" > "$d/$name.out" 2>&1
	rc=$?
	set -e
	sed "s/^/$name: /" "$d/$name.out"
	[ $rc = 2 ] || fail "$name: exit $rc, expected 2"
	grep -q "$msg" "$d/$name.out" || fail "$name: no message \"$msg\""
}
echo 'magic 1234' | bad magic 'not a crash log nor a dm-log-writes log (unknown magic)'
echo 'magic 1234' | bad magic-forced 'not a dm-log-writes log (magic 0x1234)' --format dm-log-writes
echo 'version 2' | bad version 'dm-log-writes log version 2 is not supported'
echo 'bs 1000' | bad blocksize 'block size 1000 is not a power of two'
echo 'bs 131072' | bad blocksize-big 'block size 131072 is not a power of two in 512..65536'
echo 'raw 0 1 0x40 0 1' | bad flags 'entry 0: unknown flags 0x40'
echo 'raw 0xffffffffffffff 1 0 0 1' | bad past-end 'entry 0: blocks .* reach past'
echo 'raw 0 0xffffffffffffffff 0 0' | bad huge-count 'entry 0: blocks .* reach past'
printf 'W 0 512 65\nraw 0 0 8 500\n' | bad mark-long 'entry 1: mark of 500 bytes does not fit'
echo 'raw 0 1 0 1000 1' | bad inline-long 'entry 0: 1000 bytes of inline data in 1 blocks'
printf 'W 0 512 65\n' | bad as-crashlog 'not a crash log' --format crashlog
: > "$d/empty.log"
set +e
blkcrash dump "$d/empty.log" > "$d/empty.out" 2>&1; rc=$?
blkcrash dump --format dm-log-writes "$d/ref.crashlog" > "$d/cl-as-dm.out" 2>&1; rc2=$?
head -c 20 "$d/all.log" > "$d/short.log"
blkcrash dump --format dm-log-writes "$d/short.log" > "$d/short.out" 2>&1; rc3=$?
set -e
[ $rc = 2 ] && grep -q "too short" "$d/empty.out" || fail "empty: $rc"
[ $rc2 = 2 ] && grep -q "not a dm-log-writes log" "$d/cl-as-dm.out" || fail "crash log as dm: $rc2"
[ $rc3 = 2 ] && grep -q "shorter than its super block" "$d/short.out" || fail "short: $rc3"
# a super block with no entry, and one claiming 2^64-1 entries in a
# short file: nothing to read, no error
echo 'pad 512' | mkdmlog "$d/none.log"
blkcrash dump "$d/none.log" | grep -q '^# 0 records, 0 flushes' || fail "no entries"
printf 'entries 18446744073709551615\nW 0 512 65\n' | mkdmlog "$d/claims.log"
blkcrash dump "$d/claims.log" | grep -q '^# torn: the super block claims 18446744073709551615 entries, the file holds 1$' ||
	fail "a huge nr_entries"

# ---- check: the contract between the guest log and the dm log ----
hash() { blkcrash dump "$1" | sed -n "s/^$2 WRITE .*hash=\([0-9a-f]*\).*/\1/p"; }
mkdmlog "$d/h.log" <<'SCRIPT'
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
W 12288 4096 68
SCRIPT
A=$(hash "$d/h.log" 1) B=$(hash "$d/h.log" 2) C=$(hash "$d/h.log" 3) D=$(hash "$d/h.log" 4)
[ -n "$A" ] && [ -n "$D" ] || fail "no hashes"
# the guest: A, B acknowledged; a flush covering both acknowledged; C
# issued after it; D with FUA issued after C was acknowledged
cat > "$d/guest" <<EOF2
blkfront-guestlog 1
W 1 0 8 $A 0 0
W 2 8 8 $B 0 0
F 3 2
W 4 16 8 $C 0 3
W 5 24 8 $D 1 4
EOF2
expect() {	# expect RC NAME < MKDMLOG-SCRIPT
	local want=$1 name=$2 rc
	mkdmlog "$d/$name.log"
	set +e
	blkcrash check "$d/$name.log" "$d/guest" > "$d/$name.out" 2>&1
	rc=$?
	set -e
	sed "s/^/$name: /" "$d/$name.out"
	[ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want"
}
# honest: A and B logged before the flush (they completed before it was
# submitted), D logged at once (FUA), C at teardown
expect 0 honest <<'SCRIPT'
W 0 4096 65
W 4096 4096 66
F
W 12288 4096 68 fua
W 8192 4096 67
M dm-log-writes-end
SCRIPT
grep -q "3 writes promised durable, 0 lost" "$d/honest.out" || fail "honest: counts"
# a flush that reached the disk before an acknowledged write's data (B
# completed only after the flush was submitted: the backend acknowledged
# B, or sent the flush, too early)
expect 1 flush-before-data <<'SCRIPT'
W 0 4096 65
F
W 4096 4096 66
W 12288 4096 68 fua
W 8192 4096 67
M dm-log-writes-end
SCRIPT
grep -q "NOT DURABLE: guest write #2 .*never made durable" "$d/flush-before-data.out" ||
	fail "flush-before-data: B must be reported"
grep -q "guest write #1 " "$d/flush-before-data.out" && fail "flush-before-data: A is durable"
# the flush never reached the disk (blkbackd --unsafe-ignore-flush): the
# unflushed writes are logged at teardown, after the FUA write
expect 1 ignored-flush <<'SCRIPT'
W 12288 4096 68 fua
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
M dm-log-writes-end
SCRIPT
grep -q "guest write #1 .*never made durable" "$d/ignored-flush.out" || fail "ignored-flush: A"
# FUA dropped on the way down: D is not durable
expect 1 fua-dropped <<'SCRIPT'
W 0 4096 65
W 4096 4096 66
F
W 8192 4096 67
W 12288 4096 68
M dm-log-writes-end
SCRIPT
grep -q "guest write #5 .*never made durable" "$d/fua-dropped.out" || fail "fua-dropped: D"
# an acknowledged write that never reached the device at all
expect 1 lost <<'SCRIPT'
W 0 4096 65
F
W 12288 4096 68 fua
SCRIPT
grep -q "LOST: guest write #2" "$d/lost.out" || fail "lost: B"
# a torn log is noted, and what it holds is still judged
expect 0 torn-check <<'SCRIPT'
W 0 4096 65
W 4096 4096 66
F
W 12288 4096 68 fua
W 8192 4096 67
tear 4096
SCRIPT
grep -q "note: .*torn dm-log-writes log: 4 of 5 entries read" "$d/torn-check.out" ||
	fail "torn-check: no note"

# ---- fsck: an ext4 history as dm-log-writes would log it ----
if mkfs.ext4 -V >/dev/null 2>&1 && debugfs -V >/dev/null 2>&1 &&
   e2fsck -V >/dev/null 2>&1; then
	truncate -s 16M "$d/base.img"
	mkfs.ext4 -q -F -b 4096 "$d/base.img"
	cp "$d/base.img" "$d/final.img"
	head -c 300000 /dev/urandom > "$d/data"
	debugfs -w "$d/final.img" -R "mkdir dir" >/dev/null 2>&1
	for i in 1 2 3 4 5 6; do
		debugfs -w "$d/final.img" -R "write $d/data dir/f$i" >/dev/null 2>&1
	done
	e2fsck -fn "$d/final.img" >/dev/null || fail "debugfs made an unclean filesystem"
	printf 'diff %s %s 7\nF\nM dm-log-writes-end\n' "$d/base.img" "$d/final.img" |
		mkdmlog "$d/fs-flushed.log"
	printf 'diff %s %s 7\nM dm-log-writes-end\n' "$d/base.img" "$d/final.img" |
		mkdmlog "$d/fs-unflushed.log"
	blkcrash fsck "$d/fs-flushed.log" "$d/base.img" --fs ext4 --no-random \
		--points 5 > "$d/fs-ok.out" || { cat "$d/fs-ok.out"; fail "fsck flushed"; }
	cat "$d/fs-ok.out"
	grep -q "^fsck: 1 crash points (1 flush points, 0 random.*1 clean, 0 not clean: ok" \
		"$d/fs-ok.out" || fail "fsck flushed: summary"
	set +e
	blkcrash fsck "$d/fs-unflushed.log" "$d/base.img" --fs ext4 --points 12 \
		--seed 5 --max-report 3 > "$d/fs-bad.out"
	rc=$?
	set -e
	cat "$d/fs-bad.out"
	[ $rc = 1 ] || fail "fsck unflushed: exit $rc, expected 1"
else
	echo "fsck part skipped: needs mkfs.ext4, debugfs, e2fsck"
fi

# ---- the fuzz seeds and every log above through the fuzz target ----
fuzz-dmlog-replay "$abs_top_srcdir"/harness/crash/fuzz-seeds/* "$abs_top_srcdir"/harness/crash/fuzz-corpus/* "$d"/*.log |
	tee "$d/fuzz.out"
grep -q "inputs replayed" "$d/fuzz.out" || fail "fuzz-dmlog-replay"
echo OK
