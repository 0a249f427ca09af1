#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C04: FLUSH_DISKCACHE with 2 data segments: the backing is flushed, then
# the data is written, OKAY only after both; the data is on the backing
# byte for byte.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
cat > "$BK_TMP/s" <<EOS
fill p0 seed:1
fill p1 seed:2
send op=flush id=5 sector=16 seg=p0 seg=p1 expect=OKAY
send op=read id=6 sector=16 seg=p2 seg=p3 expect=OKAY
check p2 seed:1
check p3 seed:2
dump p0 $BK_TMP/p0
dump p1 $BK_TMP/p1
EOS
run_script $DOM "$BK_TMP/s"
trace_expect 5 "id=5 issue=flush sector=0 nr=0" "id=5 host=$H_FLUSH result=0" \
	"id=5 issue=write sector=16 nr=16" "id=5 host=$H_WRITE result=8192" \
	"op=flush id=5 sector=16 nr=16 segs=2 fua=0 -> host=$H_FLUSH,$H_WRITE status=0"
cmp <(cat "$BK_TMP/p0" "$BK_TMP/p1") <(backing_dd 16 16) ||
	fail "the flush's data is not on the backing byte for byte"
stop_backend
exit 0
