#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C10: 8 WRITEs in flight, a WRITE_BARRIER with data, 4 more WRITEs: the
# trace proves drain -> fdatasync -> FUA write -> later writes: all 8
# complete before the flush is issued, the barrier's data is written with
# FUA after the flush, and none of the 4 later writes is issued before the
# barrier's FUA write completed.  Then the same with emulated FUA (write,
# then fdatasync).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 4M

gen() { # out
	local i
	{
		echo "xs-expect be feature-barrier 1"
		for i in $(seq 0 12); do echo "fill p$i seed:$((i + 1))"; done
		for i in $(seq 0 7); do echo "send op=write id=$((101 + i)) sector=$((i * 8)) seg=p$i nopush"; done
		echo "send op=barrier id=109 sector=64 seg=p8 nopush"
		for i in $(seq 9 12); do echo "send op=write id=$((101 + i)) sector=$((i * 8)) seg=p$i nopush"; done
		echo "push"
		echo "wait-all status=OKAY"
		for i in $(seq 0 12); do echo "dump p$i $BK_TMP/p$i"; done
	} > "$1"
}
gen "$BK_TMP/s"

line() { # first/last line number of a trace pattern
	grep -nE "$2" "$BACKEND_TRACE" | cut -d: -f1 | { if [ "$1" = first ]; then head -1; else tail -1; fi; }
}

check_order() { # fua-action
	local fua=$1 last_before drained flush fua_issue fua_done first_after
	last_before=$(line last " id=10[1-8] (host=|op=)")
	drained=$(line first " id=109 host=drained")
	flush=$(line first " id=109 issue=flush")
	fua_issue=$(line first " id=109 issue=write")
	fua_done=$(line last " id=109 host=$fua ")
	first_after=$(line first " id=11[0-3] ")
	grep -q " id=109 host=drain inflight=8" "$BACKEND_TRACE" ||
		fail "the barrier did not wait for 8 writes in flight"
	for v in last_before drained flush fua_issue fua_done first_after; do
		[ -n "${!v}" ] || { cat "$BACKEND_TRACE"; fail "no trace line for $v"; }
	done
	[ "$last_before" -lt "$drained" ] && [ "$drained" -lt "$flush" ] &&
	[ "$flush" -lt "$fua_issue" ] && [ "$fua_issue" -lt "$fua_done" ] &&
	[ "$fua_done" -lt "$first_after" ] || {
		cat "$BACKEND_TRACE"
		fail "order: writes done $last_before, drained $drained, flush $flush, FUA write $fua_issue..$fua_done, later writes from $first_after"
	}
}

new_guest
add_disk $DOM "$params" --be-key flush-mode=barrier
run_script $DOM "$BK_TMP/s"
check_order "$(printf %s "${H_BARRIER_FUA##*,}" | sed 's/+/\\+/g')"
grep -qF "op=barrier id=109 sector=64 nr=8 segs=1 fua=$H_FUA_BIT -> host=drain,$H_BARRIER_FUA status=0" "$BACKEND_TRACE" ||
	fail "barrier response line"
for i in $(seq 0 12); do
	cmp "$BK_TMP/p$i" <(backing_dd $((i * 8)) 8) ||
		fail "write $i not on the backing byte for byte"
done

# emulated FUA: drain, fdatasync, write, fdatasync
: > "$BACKEND_TRACE"
new_guest
add_disk $DOM memory:4M,fua=emulated --be-key flush-mode=both
run_script $DOM "$BK_TMP/s"
check_order "mem-flush"
grep -q "op=barrier id=109 sector=64 nr=8 segs=1 fua=0 -> host=drain,mem-flush,mem-write,mem-flush status=0" "$BACKEND_TRACE" ||
	{ grep "id=109" "$BACKEND_TRACE"; fail "emulated barrier response line"; }
stop_backend
exit 0
