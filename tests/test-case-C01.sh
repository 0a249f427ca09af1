#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C01: FLUSH_DISKCACHE and WRITE_BARRIER with nr_segments=0 and a garbage
# sector_number: the sector is ignored, the backing is fdatasync'ed after
# the earlier completed write, OKAY.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 4M
new_guest
add_disk $DOM "$params" --be-key flush-mode=both
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=flush id=2 sector=0xFFFFFFFFFFFFFF00 nr_segments=0 expect=OKAY
send op=barrier id=3 sector=0xFFFFFFFFFFFFFF00 nr_segments=0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
trace_expect 1 "id=1 issue=write sector=8 nr=8" "id=1 host=$H_WRITE result=4096" \
	"op=write id=1 sector=8 nr=8 segs=1 fua=0 -> host=$H_WRITE status=0"
trace_expect 2 "id=2 issue=flush sector=0 nr=0" "id=2 host=$H_FLUSH result=0" \
	"op=flush id=2 sector=0 nr=0 segs=0 fua=0 -> host=$H_FLUSH status=0"
trace_expect 3 "id=3 host=drain inflight=0" "id=3 issue=flush sector=0 nr=0" \
	"id=3 host=$H_FLUSH result=0" \
	"op=barrier id=3 sector=0 nr=0 segs=0 fua=0 -> host=drain,$H_FLUSH status=0"
stop_backend
exit 0
