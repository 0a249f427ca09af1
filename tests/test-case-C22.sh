#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C22: a WRITE whose data pages are granted read-only is OKAY and its
# data lands on the backing byte for byte, with grant copies and with
# maps per request (a READ into a read-only grant stays ERROR: C09).
# test-case-C22-persistent.sh runs it with persistent grants.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim
MODES=${C22_MODES:-"--feature-persistent=0;--feature-persistent=0 --map-threshold=512"}
new_disk 4M
cat > "$BK_TMP/s" <<EOS
grant ro1 ro
grant ro2 ro
fill ro1 seed:221
fill ro2 seed:222
send op=write id=1 sector=16 seg=ro1 seg=ro2 expect=OKAY
send op=read id=2 sector=16 seg=p0 seg=p1 expect=OKAY
check p0 seed:221
check p1 seed:222
dump ro1 $BK_TMP/ro1
dump ro2 $BK_TMP/ro2
send op=read id=3 sector=16 seg=ro1 expect=ERROR
send op=write id=4 sector=32 seg=p2 seg=ro1 expect=OKAY
send op=read id=5 sector=40 seg=p3 expect=OKAY
check p3 seed:221
close
EOS
IFS=';' read -r -a modes <<< "$MODES"
for mode in "${modes[@]}"; do
	# shellcheck disable=SC2086
	start_backend $mode
	new_guest
	add_disk $DOM "$params"
	run_script $DOM "$BK_TMP/s"
	cmp "$BK_TMP/ro1" <(backing_dd 16 8) || fail "$mode: the first page is not on the backing"
	cmp "$BK_TMP/ro2" <(backing_dd 24 8) || fail "$mode: the second page is not on the backing"
	stop_backend
done
exit 0
