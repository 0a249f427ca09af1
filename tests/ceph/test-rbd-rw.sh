#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rbd store, byte-exact through ring -> blkbackd -> librbd -> OSD: direct
# requests of 1, 2 and 11 segments, a 16-segment indirect request and a
# partial-page one, read back through the ring and found on the image
# (rbd export) at the right offsets; then blkfront-test verify with
# flushes on one queue and on two queues (indirect 64 KiB blocks), and a
# check-only pass from a fresh connection (verify's areas, 16M-32M, are
# apart from the script's: a check-only pass finds any block it did not
# write "corrupt").  Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
start_sim_backend
new_disk 32M
new_guest
add_disk $DOM "$params"
{
	s=0
	for n in 1 2 11; do
		segs= rsegs=
		for (( i=0; i<n; i++ )); do
			echo "fill p$i seed:$((n * 100 + i))"
			segs+=" seg=p$i" rsegs+=" seg=p$((20 + i))"
		done
		echo "send op=write sector=$((n * 1000))$segs expect=OKAY"
		echo "send op=read sector=$((n * 1000))$rsegs expect=OKAY"
		for (( i=0; i<n; i++ )); do
			echo "check p$((20 + i)) seed:$((n * 100 + i))"
			echo "dump p$i $BK_TMP/w$n.$i"
		done
	done
	segs= rsegs=
	for (( i=0; i<16; i++ )); do
		echo "fill p$((50 + i)) seed:$((5000 + i))"
		segs+=" seg=p$((50 + i))" rsegs+=" seg=p$((90 + i))"
		echo "dump p$((50 + i)) $BK_TMP/i$i"
	done
	echo "send op=indirect indirect_op=write id=5000 sector=24000$segs expect=OKAY"
	echo "send op=indirect indirect_op=read id=5001 sector=24000$rsegs expect=OKAY"
	for (( i=0; i<16; i++ )); do echo "check p$((90 + i)) seed:$((5000 + i))"; done
	# sectors 1..3 of p40 and sector 7 of p42
	echo "fill p40 seed:40"
	echo "fill p42 seed:42"
	echo "send op=write sector=30000 seg=p40:1:3 seg=p42:7:7 expect=OKAY"
	echo "dump p40 $BK_TMP/p40"
	echo "dump p42 $BK_TMP/p42"
	echo "send op=flush nr_segments=0 expect=OKAY"
} > "$BK_TMP/rw.script"
run_script $DOM "$BK_TMP/rw.script"
timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" "$BK_TMP/export" ||
	fail "rbd export $img"
on_image() { dd if="$BK_TMP/export" bs=512 skip="$1" count="$2" status=none; }
for n in 1 2 11; do
	for (( i=0; i<n; i++ )); do
		cmp "$BK_TMP/w$n.$i" <(on_image $(( n * 1000 + i * 8 )) 8) ||
			fail "$n-segment write: segment $i is not on the image byte for byte"
	done
done
for (( i=0; i<16; i++ )); do
	cmp "$BK_TMP/i$i" <(on_image $(( 24000 + i * 8 )) 8) ||
		fail "indirect write: segment $i is not on the image byte for byte"
done
cmp <(dd if="$BK_TMP/p40" bs=512 skip=1 count=3 status=none; dd if="$BK_TMP/p42" bs=512 skip=7 count=1 status=none) \
	<(on_image 30000 4) || fail "partial-page write is not on the image byte for byte"
cmp -n 512 <(on_image 30004 1) /dev/zero || fail "the partial write spilled past its end"
[ "$(grep -c "op=write .* -> host=rbd_aio_writev status=0" "$BACKEND_TRACE")" = 5 ] ||
	fail "expected 5 writes answered after host=rbd_aio_writev"
grep -q "op=indirect.* -> host=rbd_aio_readv status=0\|op=read id=5001 .* -> host=rbd_aio_readv status=0" "$BACKEND_TRACE" ||
	fail "the indirect read did not go to rbd_aio_readv"
grep -q "op=flush .* -> host=rbd_aio_flush status=0" "$BACKEND_TRACE" ||
	fail "the flush did not go to rbd_aio_flush"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"

vfy() { # blkfront-test verify options...
	blkfront-test xl-add --domid $DOM --params "$params" >/dev/null || fail "xl-add $params"
	blkfront-test verify --domid $DOM --timeout 20000 "$@" >"$BK_TMP/out" 2>&1 ||
		{ cat "$BK_TMP/out"; fail "verify $* failed"; }
	grep "^verify: ok: " "$BK_TMP/out" || fail "no verify summary"
	blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
}
vfy --size 8M --offset 16M --iodepth 16 --flush-every 32 --log "$BK_TMP/glog"
vfy --bs 64k --size 8M --offset 24M --iodepth 8 --queues 2 --max-indirect 16 --flush-every 8
grep -q "vbd $DOM/51712: .*Connected.* 2 queues" "$BACKEND_LOG" ||
	fail "the two-queue run did not connect with 2 queues"
vfy --check-only --size 8M --offset 16M
vfy --check-only --bs 64k --size 8M --offset 24M
# the guest log's last write of a few sectors is what is on the image
timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" - > "$BK_TMP/export2" ||
	fail "rbd export $img"
for s in $(awk '$1 == "W" { print $3 }' "$BK_TMP/glog" | sort -u | head -5); do
	want=$(awk -v s=$s '$1 == "W" && $3 == s { h = $5 } END { print h }' "$BK_TMP/glog")
	got=$(dd if="$BK_TMP/export2" bs=512 skip=$s count=8 status=none | python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.stdin.buffer.read():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)')
	[ "$got" = "$want" ] || fail "sector $s: image hash $got, guest log says $want"
done
if grep -q 'error' "$BACKEND_LOG"; then fail "blkbackd logged an error: $(grep error "$BACKEND_LOG")"; fi
stop_backend
exit 0
