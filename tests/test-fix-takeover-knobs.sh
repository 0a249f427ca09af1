#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd taken over Connected (a restart) is served with the knobs its
# connect gave it, not with knobs the toolstack rewrote meanwhile: the
# guest was told its features once and is never told again.  The new
# blkbackd used to re-read them and serve the old connection with new
# ones: cache=writethrough rewritten to writeback acknowledged the
# guest's writes from the page cache while the guest, told it has no
# write cache (feature-flush-cache=0), never flushes; flush-mode=none
# refused the flushes the guest was told it may send; mode=r failed its
# writes.  As in Linux blkback, a rewrite takes effect at the next
# connect.  Three guests, one rewrite each, one restart:
#  A. cache writethrough -> writeback: A's write after the restart is
#     still written through (O_DSYNC, the trace's host action);
#  B. flush-mode -> none: B's flush after the restart is OKAY;
#  C. mode -> r: C's write after the restart is OKAY and reads back;
# and each one's next connect takes the new knob.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe restart-done 1 timeout=60000
fill p1 seed:2
send op=write id=2 sector=16 seg=p1 expect=OKAY timeout=20000
send op=flush id=3 nr_segments=0 expect=OKAY timeout=20000
send op=read id=4 sector=16 seg=p2 expect=OKAY timeout=20000
check p2 seed:2
EOS
# A has no write cache (writethrough): no flush offered, none sent
grep -v "op=flush" "$BK_TMP/s" > "$BK_TMP/s.A"
declare -A knob=([A]="cache writeback" [B]="flush-mode none" [C]="mode r")
fronts=()
for g in A B C; do
	new_guest
	declare "$g=$DOM"
	truncate -s 4M "$BK_TMP/$g.img"
	add_disk $DOM "$BK_TMP/$g.img"
	[ $g = A ] && xenstore-write "$(bk_be $DOM)/cache" writethrough
	script=$BK_TMP/s
	[ $g = A ] && script=$BK_TMP/s.A
	blkfront-test script --domid $DOM --max-indirect 16 --no-close "$script" \
		> "$BK_TMP/$g.out" 2>&1 &
	fronts+=($!)
	cleanup_fn kill $!
	wait_for 10 grep -q "vbd=$DOM/51712 .* op=write id=1 .*status=0" "$BACKEND_TRACE" ||
		fail "guest $g's first write was not answered"
done
xs_is "$(bk_be $A)/feature-flush-cache" 0	# writethrough: no write cache to flush
grep -q "vbd=$A/51712 .* op=write id=1 .*host=pwritev+O_DSYNC " "$BACKEND_TRACE" ||
	fail "A's first write was not written through"
for g in A B C; do
	xenstore-write "$(bk_be ${!g})/${knob[$g]% *}" "${knob[$g]#* }"
done
stop_backend
start_backend
for g in A B C; do
	wait_for 30 served_by ${!g} "$(bk_pid)" || fail "the new blkbackd does not serve guest $g's ring"
	xenstore-write "/local/domain/${!g}/device/vbd/51712/restart-done" 1
done
i=0
for g in A B C; do
	wait ${fronts[$i]} || { cat "$BK_TMP/$g.out"; fail "guest $g's requests after the restart did not get the answers it was promised"; }
	i=$((i + 1))
done
grep -q "vbd=$A/51712 .* op=write id=2 .*host=pwritev+O_DSYNC " "$BACKEND_TRACE" ||
	fail "A's write after the restart was not written through: $(grep "vbd=$A/51712 .* id=2 " "$BACKEND_TRACE")"

# the next connect takes the new knobs
for g in A B C; do
	blkfront-test attach --domid ${!g} > "$BK_TMP/$g.attach" 2>&1 ||
		{ cat "$BK_TMP/$g.attach"; fail "guest $g did not reconnect"; }
done
xs_is "$(bk_be $A)/feature-flush-cache" 1	# writeback now
xs_is "$(bk_be $C)/info" 4			# VDISK_READONLY
stop_backend
exit 0
