#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Read/write round trips through the ring for 1..11 segments, byte-exact,
# on a file store (bytes checked on the backing file too) and on a memory
# store; plus segments that cover part of a page (first_sect/last_sect)
# and a 16-segment indirect request; once with every request grant-copied
# (--map-threshold=0) and once with every request mapped (zero-copy).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim

img=$BK_TMP/disk.img
truncate -s 16M "$img"

gen_script() { # out
	local n i s=0 segs rsegs
	{
		for n in $(seq 1 11); do
			segs= rsegs=
			for (( i=0; i<n; i++ )); do
				echo "fill p$i seed:$((n * 100 + i))"
				segs+=" seg=p$i"
				rsegs+=" seg=p$((20 + i))"
			done
			s=$(( n * 1000 ))
			echo "send op=write sector=$s$segs expect=OKAY"
			echo "send op=read sector=$s$rsegs expect=OKAY"
			for (( i=0; i<n; i++ )); do
				echo "check p$((20 + i)) seed:$((n * 100 + i))"
				echo "dump p$i $BK_TMP/w$n.$i"
			done
		done
		# partial pages: sectors 1..3 of p40, all of p41, sector 7 of p42
		echo "fill p40 seed:40"
		echo "fill p41 seed:41"
		echo "fill p42 seed:42"
		echo "send op=write sector=20000 seg=p40:1:3 seg=p41:0:7 seg=p42:7:7 expect=OKAY"
		echo "fill p43 zero"
		echo "fill p44 zero"
		echo "fill p45 zero"
		echo "send op=read sector=20000 seg=p43:0:2 seg=p44:0:7 seg=p45:0:0 expect=OKAY"
		echo "dump p40 $BK_TMP/p40"
		echo "dump p41 $BK_TMP/p41"
		echo "dump p42 $BK_TMP/p42"
		echo "dump p43 $BK_TMP/p43"
		echo "dump p44 $BK_TMP/p44"
		echo "dump p45 $BK_TMP/p45"
		# an indirect request of 16 segments (64 KiB)
		segs= rsegs=
		for (( i=0; i<16; i++ )); do
			echo "fill p$((50 + i)) seed:$((5000 + i))"
			segs+=" seg=p$((50 + i))"
			rsegs+=" seg=p$((90 + i))"
		done
		echo "send op=indirect indirect_op=write id=5000 sector=24000$segs expect=OKAY"
		echo "send op=indirect indirect_op=read id=5001 sector=24000$rsegs expect=OKAY"
		for (( i=0; i<16; i++ )); do
			echo "check p$((90 + i)) seed:$((5000 + i))"
		done
	} > "$1"
}
gen_script "$BK_TMP/rw.script"

# three data paths: persistent grants (the default, both ends offer
# them), and without them grant copies (threshold 0) or maps (512)
for thr in persistent 0 512; do
if [ $thr = persistent ]; then
	start_backend
else
	start_backend --feature-persistent=0 --map-threshold=$thr
fi
: > "$BACKEND_TRACE"
for store in file memory; do
	new_guest
	if [ $store = file ]; then params=$img; else params=memory:16M; fi
	add_disk $DOM "$params"
	rm -f "$BK_TMP"/w* "$BK_TMP"/p4*
	run_script $DOM "$BK_TMP/rw.script"
	# what the guest read back of the partial request is what it wrote
	cat <(dd if="$BK_TMP/p40" bs=512 skip=1 count=3 status=none) \
	    <(cat "$BK_TMP/p41") \
	    <(dd if="$BK_TMP/p42" bs=512 skip=7 count=1 status=none) > "$BK_TMP/partial.want"
	cat <(dd if="$BK_TMP/p43" bs=512 count=3 status=none) \
	    <(cat "$BK_TMP/p44") \
	    <(dd if="$BK_TMP/p45" bs=512 count=1 status=none) > "$BK_TMP/partial.got"
	cmp "$BK_TMP/partial.want" "$BK_TMP/partial.got" ||
		fail "$store: partial-page request read back differently"
	[ $store = file ] || continue
	# the bytes on the backing file, at the right offsets
	for n in $(seq 1 11); do
		for (( i=0; i<n; i++ )); do
			cmp "$BK_TMP/w$n.$i" <(dd if="$img" bs=512 skip=$(( n * 1000 + i * 8 )) count=8 status=none) ||
				fail "file: $n-segment write, segment $i not on the backing byte for byte"
		done
	done
	cmp "$BK_TMP/partial.want" <(dd if="$img" bs=512 skip=20000 count=12 status=none) ||
		fail "file: partial-page write not on the backing byte for byte"
	# every request went to the host once, as one pwritev/preadv
	if [ $thr = 512 ]; then host=map,pwritev; else host=pwritev; fi
	[ "$(grep -c "op=write .* -> host=$host status=0" "$BACKEND_TRACE")" = 13 ] ||
		fail "expected 13 writes (12 direct, 1 indirect) with host=$host in the trace"
done
stop_backend
# the final counters say which path the data took
if [ $thr = persistent ]; then
	grep -qE "stats vbd=.* pgrant_maps=[1-9]" "$BACKEND_LOG" ||
		fail "persistent grants: nothing was mapped persistently"
else
	! grep -qE "stats vbd=.* pgrant_maps=[1-9]" "$BACKEND_LOG" ||
		fail "--feature-persistent=0: grants were mapped persistently"
fi
: > "$BACKEND_LOG"
done
exit 0
