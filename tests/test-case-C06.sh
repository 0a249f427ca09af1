#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C06: a segment with first_sect > last_sect, or last_sect 8: ERROR for
# the whole request, nothing of it submitted, the backing unchanged.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=0 seg=p0 seg=p1:5:3 expect=ERROR
send op=write id=2 sector=0 seg=p0 seg=p1:0:8 expect=ERROR
send op=read id=3 sector=0 seg=p2:5:3 expect=ERROR
send op=read id=4 sector=0 seg=p2 expect=OKAY
check p2 zero
EOS
run_script $DOM "$BK_TMP/s"
for id in 1 2 3; do
	no_host_io $id
	trace_of $id | grep -q "status=-1" || fail "request $id was not answered ERROR"
done
cmp -n 8192 <(backing_dd 0 16) /dev/zero || fail "part of a rejected request reached the backing"
stop_backend
exit 0
