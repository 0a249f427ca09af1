#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C07: DISCARD past the end, DISCARD on a read-only vbd, DISCARD whose
# nr_sectors overflows: ERROR (never EOPNOTSUPP, which would make Linux
# blkfront switch discard off for good), no host I/O.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M          # 8192 sectors
cat > "$BK_TMP/s" <<'EOS'
xs-expect be feature-discard 1
send op=discard id=1 sector=8190 nr_sectors=8 expect=ERROR
send op=discard id=2 sector=8 nr_sectors=0xFFFFFFFFFFFFFFFF expect=ERROR
send op=discard id=3 sector=0 nr_sectors=8 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
no_host_io 1
no_host_io 2
trace_of 3 | grep -q "host=$H_DISCARD result=0" || fail "good discard not punched"

# a read-only vbd: discard not offered, and refused with ERROR anyway
new_guest
add_disk $DOM "$params" --mode r
cat > "$BK_TMP/ro" <<'EOS'
xs-expect be feature-discard 0
send op=discard id=11 sector=0 nr_sectors=8 expect=ERROR
send op=write id=12 sector=0 seg=p0 expect=ERROR
send op=read id=13 sector=0 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/ro"
no_host_io 11
no_host_io 12
stop_backend
exit 0
