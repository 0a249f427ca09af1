#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C08: DISCARD with the SECURE flag while discard-secure is 0: a plain
# discard, OKAY.  Where discard-secure=1 (memory store), a secure one.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
cat > "$BK_TMP/s" <<'EOS'
xs-expect be discard-secure 0
fill p0 byte:0x5a
send op=write id=1 sector=0 seg=p0 expect=OKAY
send op=discard id=2 sector=0 nr_sectors=8 secure=1 expect=OKAY
send op=read id=3 sector=0 seg=p1 expect=OKAY
check p1 zero
EOS
run_script $DOM "$BK_TMP/s"
trace_of 2 | grep -q "host=$H_DISCARD result=0" || fail "not a plain discard"

new_guest
add_disk $DOM memory:4M
cat > "$BK_TMP/m" <<'EOS'
xs-expect be discard-secure 1
send op=discard id=21 sector=0 nr_sectors=8 secure=1 expect=OKAY
send op=discard id=22 sector=8 nr_sectors=8 secure=0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/m"
trace_of 21 | grep -q "host=mem-secure-discard result=0" || fail "secure discard not secure"
trace_of 22 | grep -q "host=mem-discard result=0" || fail "plain discard not plain"
stop_backend
exit 0
