#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM while a closed vbd still drains: blkbackd stops taking
# requests everywhere, lets the draining vbd (A, 2 s per request) and
# the others finish in parallel, answers every request it consumed,
# writes Closed for each vbd (--close-on-exit) and exits 0; every write
# acknowledged on a file vbd (C) is on its backing.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --close-on-exit
N=3

new_guest; A=$DOM
add_disk $A memory:4M,delay-ms=2000
writes_in_flight $A $N; fronta=$front
xenstore-write /local/domain/$A/device/vbd/51712/state 5
xs_wait "$(bk_be $A)/state" 5 5

# C, on a file, connected while A drains: writes acknowledged, then it
# stays connected until blkbackd closes it
guest_with_disk 4M; C=$DOM
{
	for i in 0 1 2 3; do
		echo "fill p$i seed:$((i + 20))"
		echo "send op=write id=$((i + 1)) sector=$((i * 16)) seg=p$i expect=OKAY"
		echo "dump p$i $BK_TMP/c$i"
	done
	echo "xs-expect be state 6 timeout=30000"
} > "$BK_TMP/c"
blkfront-test script --domid $C --max-indirect 16 --no-close "$BK_TMP/c" > "$BK_TMP/c.out" 2>&1 &
frontc=$!
cleanup_fn kill $frontc
wait_for 10 test -s "$BK_TMP/c3" || { cat "$BK_TMP/c.out"; fail "C's writes were not acknowledged"; }

# SIGTERM now, while A still drains
grep -q "vbd=$A/51712 ring=0 op=write id=$N " "$BACKEND_TRACE" &&
	fail "A had drained already: the test proves nothing (too slow a machine?)"
stop_backend

wait $fronta || { cat "$BK_TMP/w$A.out"; fail "A's frontend did not get OKAY for every write"; }
writes_answered $A $N 0 mem-write || fail "A's writes were not all done and answered OKAY before exit"
wait $frontc || { cat "$BK_TMP/c.out"; fail "C's frontend did not see Closed"; }
xs_is "$(bk_be $A)/state" 6
xs_is "$(bk_be $C)/state" 6
for i in 0 1 2 3; do
	cmp "$BK_TMP/c$i" <(dd if="$img" bs=512 skip=$((i * 16)) count=8 status=none) ||
		fail "C's acknowledged write $((i + 1)) is not on the backing"
done
exit 0
