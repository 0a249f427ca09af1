#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# verify workloads through blkbackd pass on a file store and a memory
# store, direct and indirect requests, one and two queues of several
# pages; the guest log says what was acknowledged, in order; a later
# check-only pass finds every block intact.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend
img=$FT/disk.img
truncate -s 16M "$img"

vfy() { # params  blkfront-test options...
	local params=$1
	shift
	blkfront-test xl-add --domid $DOM --params "$params" >/dev/null || fail "xl-add $params"
	blkfront-test verify --domid $DOM --timeout 10000 "$@" >"$FT/out" 2>&1 ||
		{ cat "$FT/out"; fail "verify $* on $params failed"; }
	grep -q "^verify: ok: " "$FT/out" || fail "no verify summary"
	cat "$FT/out"
	blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
}

# file store: 4 KiB blocks, QD 16, a flush every 32 writes, with the guest log
vfy "$img" --size 8M --iodepth 16 --flush-every 32 --log "$FT/glog"
# memory store: 44 KiB blocks (11 segments), 2 queues of 4 pages
vfy memory:16M --bs 44k --size 8M --iodepth 8 --queues 2 --ring-order 2
# the 32-bit ring layout (protocol x86_32-abi)
vfy memory:16M --bs 16k --size 4M --iodepth 8 --protocol x86_32-abi
grep -q "x86_32-abi" "$BACKEND_LOG" || fail "blkbackd did not see protocol x86_32-abi"
# indirect: 64 KiB blocks need 16 segments
vfy memory:16M --bs 64k --size 8M --iodepth 4 --max-indirect 16
# file store again, without indirect, 8 KiB at an offset
vfy "$img" --bs 8k --offset 8M --size 4M --iodepth 32 --max-indirect 0 --seed 7
# after all that: every block on the file is whole and at its sector
vfy "$img" --check-only --size 8M
vfy "$img" --check-only --bs 8k --offset 8M --size 8M
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null
blkfront-test verify --domid $DOM --check-only --offset 8M --size 4M 2>&1 | grep -q "block written with --bs 8192, checked with 4096" ||
	fail "check-only did not notice blocks of another size"
blkfront-test xl-remove --domid $DOM >/dev/null

# guest log: header, W seq sector nr hash fua issued_after, F seq covers
head -1 "$FT/glog" | grep -qx "blkfront-guestlog 1" || fail "guest log header"
nw=$(grep -c '^W ' "$FT/glog")
[ "$nw" = 4096 ] || fail "guest log has $nw W records, expected 4096 (2 x 2048 blocks)"
[ "$(grep -c '^F ' "$FT/glog")" -ge 100 ] || fail "guest log: too few F records"
awk 'NR > 1 && $2 != NR - 1 { exit 1 }' "$FT/glog" || fail "guest log seq numbers not consecutive"
awk '$1 == "W" && (NF != 7 || $4 != 8 || length($5) != 16) { exit 1 }' "$FT/glog" ||
	fail "malformed W record"
# a W record's hash is the hash of what is on the disk (each block written twice,
# the last write wins: check the last record of a few sectors)
for s in $(awk '$1 == "W" { print $3 }' "$FT/glog" | sort -u | head -5); do
	want=$(awk -v s=$s '$1 == "W" && $3 == s { h = $5 } END { print h }' "$FT/glog")
	got=$(dd if="$img" bs=512 skip=$s count=8 status=none | python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.stdin.buffer.read():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)')
	[ "$got" = "$want" ] || fail "sector $s: disk hash $got, guest log says $want"
done
grep -q 'error' "$BACKEND_LOG" && fail "blkbackd logged an error: $(grep error "$BACKEND_LOG")"
stop_backend
exit 0
