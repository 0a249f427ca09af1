#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C02: READ, WRITE and DISCARD whose range wraps past 2^64: ERROR, and no
# host I/O at all.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 4M
new_guest
add_disk $DOM "$params"
cat > "$BK_TMP/s" <<'EOS'
xs-expect be feature-discard 1
send op=read id=1 sector=0xFFFFFFFFFFFFFFF8 seg=p0 expect=ERROR
send op=write id=2 sector=0xFFFFFFFFFFFFFFF8 seg=p0 expect=ERROR
send op=discard id=3 sector=0xFFFFFFFFFFFFFFF8 nr_sectors=8 expect=ERROR
send op=read id=4 sector=0 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
for id in 1 2 3; do
	no_host_io $id
	trace_of $id | grep -q "host=none status=-1" || fail "request $id: not ERROR without host I/O"
done
stop_backend
exit 0
