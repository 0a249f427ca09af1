#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cache=writethrough (wce=0): the backing is O_DSYNC, every completed
# write is durable, so flushes and barriers commit nothing (issue #6,
# DESIGN-NOTES "wce0: nothing to commit").  The trace proves:
#  - an empty FLUSH_DISKCACHE is answered OKAY with no host action
#    (host=none), a FLUSH with data is the plain O_DSYNC write;
#  - a WRITE_BARRIER with data still drains 8 writes in flight before
#    its write, and the 4 writes after it wait for it (the ordering is
#    kept), but no fdatasync and no RWF_DSYNC is issued;
#  - an empty barrier drains and does nothing else;
#  - every byte is on the backing.
# Then the same script on cache=writeback takes its fdatasyncs (C10 has
# the full order there).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
img=$BK_TMP/disk.img

gen() { # out
	local i
	{
		echo "xs-expect be feature-barrier 1"
		echo "xs-expect be feature-flush-cache 1"
		for i in $(seq 0 14); do echo "fill p$i seed:$((i + 1))"; done
		for i in $(seq 0 7); do echo "send op=write id=$((101 + i)) sector=$((i * 8)) seg=p$i nopush"; done
		echo "send op=barrier id=109 sector=64 seg=p8 nopush"
		for i in $(seq 9 12); do echo "send op=write id=$((101 + i)) sector=$((i * 8)) seg=p$i nopush"; done
		echo "push"
		echo "wait-all status=OKAY"
		echo "send op=flush id=120 sector=0 nr_segments=0 expect=OKAY"
		echo "send op=flush id=121 sector=104 seg=p13 expect=OKAY"
		echo "send op=barrier id=122 sector=0 nr_segments=0 expect=OKAY"
		echo "send op=barrier id=123 sector=112 seg=p14 expect=OKAY"
	} > "$1"
}
gen "$BK_TMP/s"

line() { # first/last line number of a trace pattern
	grep -nE "$2" "$BACKEND_TRACE" | cut -d: -f1 | { if [ "$1" = first ]; then head -1; else tail -1; fi; }
}

# ---- writethrough ----
truncate -s 4M "$img"
new_guest
add_disk $DOM "$img" --be-key cache=writethrough --be-key flush-mode=both
run_script $DOM "$BK_TMP/s"

if grep -qE "fdatasync|RWF_DSYNC|issue=flush|issue=write-fua" "$BACKEND_TRACE"; then
	grep -E "fdatasync|RWF_DSYNC|issue=flush|issue=write-fua" "$BACKEND_TRACE"
	fail "writethrough: a flush or FUA reached the host"
fi
grep -q " id=109 host=drain inflight=8" "$BACKEND_TRACE" ||
	{ cat "$BACKEND_TRACE"; fail "the barrier did not wait for 8 writes in flight"; }
last_before=$(line last " id=10[1-8] (host=|op=)")
drained=$(line first " id=109 host=drained")
w_issue=$(line first " id=109 issue=write ")
w_done=$(line first " id=109 host=pwritev\+O_DSYNC ")
first_after=$(line first " id=11[0-3] ")
for v in last_before drained w_issue w_done first_after; do
	[ -n "${!v}" ] || { cat "$BACKEND_TRACE"; fail "no trace line for $v"; }
done
[ "$last_before" -lt "$drained" ] && [ "$drained" -lt "$w_issue" ] &&
[ "$w_issue" -lt "$w_done" ] && [ "$w_done" -lt "$first_after" ] || {
	cat "$BACKEND_TRACE"
	fail "order: writes done $last_before, drained $drained, barrier write $w_issue..$w_done, later writes from $first_after"
}
grep -q "op=barrier id=109 sector=64 nr=8 segs=1 fua=0 -> host=drain,pwritev+O_DSYNC status=0" \
	"$BACKEND_TRACE" || { trace_of 109; fail "writethrough barrier response line"; }
trace_expect 120 "op=flush id=120 sector=0 nr=0 segs=0 fua=0 -> host=none status=0"
trace_expect 121 \
	"id=121 issue=write sector=104 nr=8" \
	"id=121 host=pwritev+O_DSYNC result=4096" \
	"op=flush id=121 sector=104 nr=8 segs=1 fua=0 -> host=pwritev+O_DSYNC status=0"
trace_expect 122 \
	"id=122 host=drain inflight=0" \
	"op=barrier id=122 sector=0 nr=0 segs=0 fua=0 -> host=drain status=0"
trace_of 123 | grep -qx "op=barrier id=123 sector=112 nr=8 segs=1 fua=0 -> host=drain,pwritev+O_DSYNC status=0" ||
	{ trace_of 123; fail "writethrough barrier 123"; }
# every page on the backing byte for byte: read back through the ring
for i in $(seq 0 14); do
	echo "fill p$i zero"
	echo "send op=read sector=$((i * 8)) seg=p$i expect=OKAY"
	echo "check p$i seed:$((i + 1))"
done > "$BK_TMP/check"
run_script $DOM "$BK_TMP/check"

# ---- writeback: the same requests take their fdatasyncs ----
: > "$BACKEND_TRACE"
truncate -s 0 "$img"
truncate -s 4M "$img"
new_guest
add_disk $DOM "$img" --be-key cache=writeback --be-key flush-mode=both
run_script $DOM "$BK_TMP/s"
trace_of 120 | grep -qx "op=flush id=120 sector=0 nr=0 segs=0 fua=0 -> host=fdatasync status=0" ||
	{ trace_of 120; fail "writeback: the empty flush is not an fdatasync"; }
trace_of 121 | grep -qx "op=flush id=121 sector=104 nr=8 segs=1 fua=0 -> host=fdatasync,pwritev status=0" ||
	{ trace_of 121; fail "writeback: flush with data"; }
trace_of 122 | grep -qx "op=barrier id=122 sector=0 nr=0 segs=0 fua=0 -> host=drain,fdatasync status=0" ||
	{ trace_of 122; fail "writeback: empty barrier"; }
grep -q "op=barrier id=109 sector=64 nr=8 segs=1 fua=1 -> host=drain,fdatasync,pwritev+RWF_DSYNC status=0" \
	"$BACKEND_TRACE" || { trace_of 109; fail "writeback barrier response line"; }
stop_backend
exit 0
