#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C20: one request fails in part.  The backing (memory store,
# fail-sectors=512-519: a medium error on one 4 KiB page, sectors before
# it transferred, as a disk does) fails the middle of an 11-segment
# WRITE, a READ of the same range, and a 64-segment INDIRECT WRITE whose
# first page is the bad one, then one whose last page is: ERROR every
# time, never OKAY.  Writes just before and just after the bad range,
# in flight together with a failing one in all six orders, are OKAY and
# read back byte-exact; the daemon keeps serving.  On each data path:
# grant copies, maps per request, persistent grants.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim

segs() { # first-page count: seg=pF .. seg=pF+N-1
	local i
	for (( i = $1; i < $1 + $2; i++ )); do printf ' seg=p%d' $i; done
}
{
	for i in $(seq 0 63); do echo "fill p$i seed:$((i + 1))"; done
	echo "send op=write id=1 sector=480$(segs 0 11) expect=ERROR"
	echo "send op=read id=2 sector=480$(segs 100 11) expect=ERROR"
	echo "send op=indirect indirect_op=write id=3 sector=512$(segs 0 64) expect=ERROR"
	echo "send op=indirect indirect_op=write id=4 sector=8$(segs 0 64) expect=ERROR"
	echo "send op=read id=5 sector=512 seg=p100 expect=ERROR"
	id=10
	for order in "b g a" "b a g" "g b a" "g a b" "a b g" "a g b"; do
		echo "fill p70 seed:$id"
		echo "fill p71 seed:$((id + 1))"
		echo "fill p72 seed:$((id + 2))"
		for r in $order; do
			case $r in
			g) echo "send op=write id=$id sector=504 seg=p70 nopush" ;;
			b) echo "send op=write id=$((id + 1)) sector=512 seg=p71 nopush" ;;
			a) echo "send op=write id=$((id + 2)) sector=520 seg=p72 nopush" ;;
			esac
		done
		echo "push"
		echo "wait id=$id status=OKAY"
		echo "wait id=$((id + 1)) status=ERROR"
		echo "wait id=$((id + 2)) status=OKAY"
		echo "send op=read sector=504 seg=p80 expect=OKAY"
		echo "check p80 seed:$id"
		echo "send op=read sector=520 seg=p81 expect=OKAY"
		echo "check p81 seed:$((id + 2))"
		id=$((id + 3))
	done
	# far from it, a 64-segment write and read: byte-exact
	echo "send op=indirect indirect_op=write id=90 sector=2048$(segs 0 64) expect=OKAY"
	echo "send op=indirect indirect_op=read id=91 sector=2048$(segs 100 64) expect=OKAY"
	for i in 0 31 63; do echo "check p$((100 + i)) seed:$((i + 1))"; done
} > "$BK_TMP/s"

for mode in "--feature-persistent=0" "--feature-persistent=0 --map-threshold=512" \
	    "--feature-persistent=1"; do
	: > "$BACKEND_TRACE"
	# shellcheck disable=SC2086
	start_backend $mode
	new_guest
	add_disk $DOM memory:4M,fail-sectors=512-519
	run_script $DOM "$BK_TMP/s"
	for id in 1 2 3 4 5; do
		[ "$(trace_of $id | grep -c "status=")" = 1 ] || fail "$mode: request $id: not one response"
		trace_of $id | grep -q " status=-1" || fail "$mode: request $id was not answered ERROR"
	done
	grep -qE "id=(1|2|3|4|5) .*status=0" "$BACKEND_TRACE" && fail "$mode: a failing request was OKAY"
	good_device_works memory:1M
	stop_backend
done
exit 0
