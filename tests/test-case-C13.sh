#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C13: operations 4 (RESERVED_1), 7 and 255: EOPNOTSUPP; an INDIRECT whose
# indirect_op is FLUSH_DISKCACHE: ERROR.  No host I/O for any.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
new_disk 4M memory
add_disk $DOM "$params"
cat > "$BK_TMP/s" <<'EOS'
send op=4 id=1 sector=0 seg=p0 expect=EOPNOTSUPP
send op=7 id=2 sector=0 seg=p0 expect=EOPNOTSUPP
send op=255 id=3 sector=0 seg=p0 expect=EOPNOTSUPP
send op=indirect indirect_op=flush id=4 sector=0 nr_segments=1 seg=p0 igref=p20 expect=ERROR
send op=read id=5 sector=0 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
for id in 1 2 3 4; do no_host_io $id; done
trace_of 1 | grep -q "^op=reserved id=1 .*status=-2" || { trace_of 1; fail "op 4 not EOPNOTSUPP"; }
trace_of 4 | grep -q "status=-1" || fail "indirect flush not ERROR"
stop_backend
exit 0
