#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkcrash check: the durability contract between what the guest was
# told (guest log, include/guestlog.h) and what the host did (crash log).
# Honest logs pass; a flush acknowledged before its fdatasync, an ignored
# flush, a lost write and a FUA write that was not durable are caught.
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$abs_top_builddir/tests:$PATH"
requires blkcrash --help

d=$(mktemp -d /tmp/crash-check.XXXXXX)
cleanup_fn rm -rf "$d"

# host hash of a 4096-byte write of BYTE, from blkcrash dump
mkcrashlog "$d/h" <<'SCRIPT'
dev 1048576
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
W 12288 4096 68
SCRIPT
hash() { blkcrash dump "$d/h" | sed -n "s/^$1 WRITE .*hash=\([0-9a-f]*\).*/\1/p"; }
A=$(hash 1) B=$(hash 2) C=$(hash 3) D=$(hash 4)
[ -n "$A" ] && [ -n "$D" ] || fail "no hashes"

# The guest: writes A, B; flush (covers both) acked; then C issued after
# the flush ack; then D with FUA (a barrier with data) issued after C
# acked; then C again... (7th field: issued after that guest record).
cat > "$d/guest" <<EOF2
blkfront-guestlog 1
W 1 0 8 $A 0 0
W 2 8 8 $B 0 0
F 3 2
W 4 16 8 $C 0 3
W 5 24 8 $D 1 4
EOF2

expect() {	# expect RC NAME HOSTSCRIPT [GUESTLOG]
	local want=$1 name=$2 script=$3 guest=${4:-$d/guest} rc
	printf '%s\n' "$script" | mkcrashlog "$d/$name.log"
	set +e
	blkcrash check "$d/$name.log" "$guest" > "$d/$name.out" 2>&1
	rc=$?
	set -e
	sed "s/^/$name: /" "$d/$name.out"
	[ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want"
}

expect 0 honest 'dev 1048576
W 0 4096 65
W 4096 4096 66
F
W 8192 4096 67
W 12288 4096 68 fua'
grep -q "3 writes promised durable, 0 lost" "$d/honest.out" || fail "honest: counts"

# the host flushed (fdatasync) only after the guest's next write had
# arrived: the flush was acknowledged before its fdatasync
expect 1 ack-before-fdatasync 'dev 1048576
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
F 3
W 12288 4096 68 fua'
grep -q "NOT DURABLE: guest write #1 .* durable only at host #4, after host #3" \
	"$d/ack-before-fdatasync.out" || fail "ack-before-fdatasync: no report"

# the flush never reached the host (--unsafe-ignore-flush)
expect 1 ignored-flush 'dev 1048576
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
W 12288 4096 68 fua'
grep -q "never made durable" "$d/ignored-flush.out" || fail "ignored-flush: no report"

# a flush that covered only what completed before it was submitted:
# B completed while it ran (covers=2: only A)
expect 1 flush-raced-write 'dev 1048576
W 0 4096 65
W 4096 4096 66
F 2
W 8192 4096 67
W 12288 4096 68 fua'
grep -q "guest write #2 .*never made durable" "$d/flush-raced-write.out" ||
	fail "flush-raced-write: B must be reported"

# an acknowledged write the host never wrote
expect 1 lost-write 'dev 1048576
W 0 4096 65
F
W 8192 4096 67
W 12288 4096 68 fua'
grep -q "LOST: guest write #2" "$d/lost-write.out" || fail "lost-write: no report"

# a FUA write acknowledged but not durable (no FUA, no flush after it)
expect 1 fua-not-durable 'dev 1048576
W 0 4096 65
W 4096 4096 66
F
W 8192 4096 67
W 12288 4096 68'
grep -q "guest write #5 .*never made durable" "$d/fua-not-durable.out" ||
	fail "fua-not-durable: no report"

# a failed host flush makes nothing durable (case C15: never OKAY)
expect 1 failed-flush 'dev 1048576
W 0 4096 65
W 4096 4096 66
FX
W 8192 4096 67
W 12288 4096 68 fua'

# wce=0: the store below has no volatile cache, the recorder logs every
# completed write durable and blkbackd sends no flush down (nothing to
# commit): no FLUSH record at all, and the check passes
expect 0 writethrough 'dev 1048576 writethrough
W 0 4096 65 durable
W 4096 4096 66 durable
W 8192 4096 67 durable
W 12288 4096 68 durable'
grep -q "3 writes promised durable, 0 lost" "$d/writethrough.out" || fail "writethrough: counts"
# a writethrough-labelled log hiding a write that was not durable (B: no
# durable flag, and no flush covers it): the label vouches for nothing
expect 1 writethrough-hidden 'dev 1048576 writethrough
W 0 4096 65 durable
W 4096 4096 66
W 8192 4096 67 durable
W 12288 4096 68 durable'
grep -q "guest write #2 .*never made durable" "$d/writethrough-hidden.out" ||
	fail "writethrough-hidden: B must be reported"

# without issue order (6-field W) only "durable by the end" is checkable
sed 's/^\(W [0-9]* [0-9]* [0-9]* [0-9a-f]* [01]\) [0-9]*$/\1/' "$d/guest" > "$d/guest6"
expect 0 no-order 'dev 1048576
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
F 3
W 12288 4096 68 fua' "$d/guest6"
grep -q "has no issue order" "$d/no-order.out" || fail "no-order: no note"
expect 1 no-order-ignored 'dev 1048576
W 0 4096 65
W 4096 4096 66
W 8192 4096 67
W 12288 4096 68 fua' "$d/guest6"

# a write overwritten by a later one before the flush: a cache below
# may never write the older data; it is kept if the newer one is durable
cat > "$d/guest-over" <<EOF2
blkfront-guestlog 1
W 1 0 8 $A 0 0
W 2 0 8 $B 0 1
F 3 2
EOF2
expect 0 overwritten 'dev 1048576
W 0 4096 66
F' "$d/guest-over"
grep -q "0 lost (0 never on the host log), 1 overwritten in time" "$d/overwritten.out" ||
	fail "overwritten: counts"
expect 1 overwritten-lost 'dev 1048576
W 0 4096 65
F' "$d/guest-over"
grep -q "LOST: guest write #2" "$d/overwritten-lost.out" || fail "overwritten-lost: #2"

# a torn last line of the guest log is ignored; a lost line is an error
{ cat "$d/guest"; printf 'W 6 32 8 %s 0' "$A"; } > "$d/guest-torn"
expect 0 torn-guest 'dev 1048576
W 0 4096 65
W 4096 4096 66
F
W 8192 4096 67
W 12288 4096 68 fua' "$d/guest-torn"
sed '/^W 2 /d' "$d/guest" > "$d/guest-gap"
expect 2 gap-guest 'dev 1048576' "$d/guest-gap"
grep -q "a lost line" "$d/gap-guest.out" || fail "gap-guest: message"
# a crash log torn at its tail (the recorder stopped mid-append) is read
# up to the tear, with a note; one damaged in the middle, with whole
# records after the damage, is a corrupt log (exit 2), not lost writes
# to blame on the backend
honest='dev 1048576
W 0 4096 65
W 4096 4096 66
F
W 8192 4096 67
W 12288 4096 68 fua'
expect 0 torn-host "$honest
W 16384 4096 69
tear 100"
grep -q "bytes of torn tail ignored" "$d/torn-host.out" || fail "torn-host: no note"
printf '%s\n' "$honest" | mkcrashlog "$d/flipped.log"
# one bit of the data of record #2 (header 64, #1 64+4096, #2's header 64)
printf '\x43' | dd of="$d/flipped.log" bs=1 seek=$((64 + 64 + 4096 + 64 + 100)) \
	conv=notrunc status=none
rc=0; blkcrash check "$d/flipped.log" "$d/guest" > "$d/flipped.out" 2>&1 || rc=$?
sed 's/^/flipped: /' "$d/flipped.out"
[ "$rc" = 2 ] || fail "flipped: exit $rc, expected 2 (a corrupt log)"
grep -q "corrupt log" "$d/flipped.out" || fail "flipped: not reported as a corrupt log"
grep -q "VIOLATED\|LOST" "$d/flipped.out" && fail "flipped: the backend blamed"
rc=0; blkcrash fsck --fs ext4 "$d/flipped.log" "$d/flipped.log" > "$d/flipped-fsck.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "corrupt log" "$d/flipped-fsck.out" || fail "flipped: fsck took it"
blkcrash dump "$d/flipped.log" > "$d/flipped.dump" 2> "$d/flipped.err" || fail "flipped: dump"
grep -q "corrupt log" "$d/flipped.err" || fail "flipped: dump gives no warning"
echo OK
