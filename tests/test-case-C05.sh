#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C05: READ/WRITE with nr_segments 0, 12, 255; INDIRECT with nr_segments
# 0, and above the advertised feature-max-indirect-segments (16 here;
# 256 by default): ERROR, nothing submitted.  With indirect not offered
# at all: EOPNOTSUPP.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --max-indirect-segments=16
new_guest
new_disk 4M memory
add_disk $DOM "$params"
cat > "$BK_TMP/s" <<'EOS'
xs-expect be feature-max-indirect-segments 16
send op=read id=1 sector=0 nr_segments=0 expect=ERROR
send op=write id=2 sector=0 nr_segments=0 expect=ERROR
send op=read id=3 sector=0 nr_segments=12 seg=p0 seg=p1 seg=p2 seg=p3 seg=p4 seg=p5 seg=p6 seg=p7 seg=p8 seg=p9 seg=p10 seg=p11 expect=ERROR
send op=write id=4 sector=0 nr_segments=12 seg=p0 seg=p1 seg=p2 seg=p3 seg=p4 seg=p5 seg=p6 seg=p7 seg=p8 seg=p9 seg=p10 seg=p11 expect=ERROR
send op=write id=5 sector=0 nr_segments=255 seg=p0 expect=ERROR
send op=indirect indirect_op=read id=6 sector=0 nr_segments=0 igref=p20 expect=ERROR
send op=indirect indirect_op=write id=7 sector=0 nr_segments=17 igref=p20 expect=ERROR
send op=indirect indirect_op=write id=9 sector=0 nr_segments=300 igref=p20 expect=ERROR
send op=read id=8 sector=0 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
for id in 1 2 3 4 5 6 7 9; do
	no_host_io $id
	trace_of $id | grep -q "status=-1" || fail "request $id was not answered ERROR"
done
stop_backend

# indirect not offered: the operation is unknown to this backend
start_backend --max-indirect-segments=0
new_guest
new_disk 4M memory
add_disk $DOM "$params"
cat > "$BK_TMP/s0" <<'EOS'
xs-expect be feature-max-indirect-segments -
send op=indirect indirect_op=read id=21 sector=0 nr_segments=1 igref=p20 expect=EOPNOTSUPP
EOS
run_script $DOM "$BK_TMP/s0"
no_host_io 21
stop_backend
exit 0
