#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The trace names an unknown operation by its number (blkbackd.8 TRACE
# FORMAT: "opN"), keeps "reserved" for BLKIF_OP_RESERVED_1 and shows an
# INDIRECT request under its indirect_op.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
add_disk $DOM memory:4M
cat > "$BK_TMP/s" <<'EOS'
send op=7 id=1 sector=0 seg=p0 expect=EOPNOTSUPP
send op=200 id=2 sector=0 seg=p0 expect=EOPNOTSUPP
send op=4 id=3 sector=0 seg=p0 expect=EOPNOTSUPP
send op=indirect indirect_op=read id=4 sector=0 seg=p1 seg=p2 igref=p20 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
trace_of 1 | grep -qE "^op=op7 id=1 .*status=-2( reason=.*)?$" || { trace_of 1; fail "op 7 not traced as op7"; }
trace_of 2 | grep -qE "^op=op200 id=2 .*status=-2( reason=.*)?$" || { trace_of 2; fail "op 200 not traced as op200"; }
trace_of 3 | grep -qE "^op=reserved id=3 .*status=-2( reason=.*)?$" || { trace_of 3; fail "op 4 not traced as reserved"; }
trace_of 4 | grep -qE "^op=read id=4 .* segs=2 .*status=0$" || { trace_of 4; fail "indirect read not traced as read"; }
stop_backend
exit 0
