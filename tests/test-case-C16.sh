#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C16: state-machine corners, each checked by the exact sequence of
# states blkbackd writes (its log) and byte-exact I/O:
#  (a) InitWait, and the frontend writes 5, 6, 1, then the normal
#      handshake: 2, then 5, 6, 2, 4 (and 5, 6 at its close);
#  (b) Connected, the frontend jumps to 6 without 5: 6 (Closing while
#      the queue stops), with the old ring already unmapped when 6 is
#      read (ring-new checks it),
#      then 1 and a handshake on new ring refs: 2, 4, byte-exact I/O on
#      the new ring (a file backing: the data written before is there);
#  (c) a second frontend instance (a bootloader, then the OS) finds the
#      vbd Connected: it goes 5, 6, 1, new keys, 3 (Linux's
#      xenbus_reset_frontend) and connects; the first instance's ring
#      and pages are never touched again (snapshot, then untouched while
#      the second is Connected);
#  (d) the toolstack closes while Connected (online=0, state 5): 5
#      before 6; blkbackd never removes its directory, and after
#      xl-remove never recreates it.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 4M

# (a)
new_guest; A=$DOM
fe=/local/domain/$A/device/vbd/51712 be=$(bk_be $A)
add_disk $A "$params"
xs_wait $be/state 2
for st in 5 6 1; do
	xenstore-write $fe/state $st
	want=$st; [ $st = 1 ] && want=2
	xs_wait $be/state $want 2
done
io_works $A
xs_wait $be/state 6
be_states_are $A 2 5 6 2 4 5 6
xs_absent $be/error

# (b)
cat > "$BK_TMP/b" <<EOS
fill p0 seed:1
send op=write id=1 sector=0 seg=p0 expect=OKAY
xs-write fe state 6
xs-expect be state 6 timeout=2000
ring-new
xs-write fe state 1
xs-expect be state 2 timeout=2000
xs-write fe state 3
xs-expect be state 4 timeout=2000
send op=read id=2 sector=0 seg=p1 expect=OKAY
check p1 seed:1
fill p2 seed:2
send op=write id=3 sector=8 seg=p2 expect=OKAY
send op=read id=4 sector=8 seg=p3 expect=OKAY
check p3 seed:2
dump p2 $BK_TMP/b-p2
close
EOS
new_guest; B=$DOM
add_disk $B "$params"
run_script $B "$BK_TMP/b"
# (Closing while the queue thread stops: blkbackd shows it during
# every disconnect, DESIGN-NOTES "vbd state machine")
be_states_are $B 2 4 5 6 2 4 5 6
cmp "$BK_TMP/b-p2" <(backing_dd 8 8) || fail "(b): the new ring's write is not on the backing"

# (c)
new_guest; C=$DOM
fe=/local/domain/$C/device/vbd/51712 be=$(bk_be $C)
add_disk $C "$params"
cat > "$BK_TMP/c1" <<'EOS'
fill p0 seed:11
send op=write id=1 sector=16 seg=p0 expect=OKAY
send op=read id=2 sector=16 seg=p1 expect=OKAY
snapshot
xs-write fe ready 1
xs-expect fe go 1 timeout=30000
untouched
xs-write fe done1 1
EOS
cat > "$BK_TMP/c2" <<'EOS'
send op=read id=1 sector=16 seg=p5 expect=OKAY
check p5 seed:11
fill p6 seed:12
send op=write id=2 sector=24 seg=p6 expect=OKAY
send op=read id=3 sector=24 seg=p7 expect=OKAY
check p7 seed:12
xs-write fe go 1
xs-expect fe done1 1 timeout=30000
close
EOS
blkfront-test script --domid $C --max-indirect 16 --no-close "$BK_TMP/c1" \
	> "$BK_TMP/c1.out" 2>&1 &
first=$!
cleanup_fn kill $first
xs_wait $fe/ready 1
# (the first instance's output too when the second waits for it in vain)
blkfront-test script --domid $C --max-indirect 16 "$BK_TMP/c2" ||
	{ echo "---- first instance ----"; cat "$BK_TMP/c1.out"; fail "script $BK_TMP/c2 failed"; }
wait $first || { cat "$BK_TMP/c1.out"; fail "the first instance's pages were touched"; }
be_states_are $C 2 4 5 6 2 4 5 6
grep -q "backend $be is Connected to an earlier instance: resetting it" "$BK_TMP/c1.out" &&
	fail "the first instance reset"

# (d)
new_guest; D=$DOM
fe=/local/domain/$D/device/vbd/51712 be=$(bk_be $D)
add_disk $D "$params"
blkfront-test attach --domid $D --hold > "$BK_TMP/d.out" 2>&1 &
hold=$!
cleanup_fn kill $hold
xs_wait $be/state 4
xenstore-write $be/online 0 $be/state 5
# the held frontend sees Closing, closes its side and exits
wait_for 10 eval "! kill -0 $hold 2>/dev/null" || fail "the held frontend did not close"
grep -q "still maps" "$BK_TMP/d.out" && { cat "$BK_TMP/d.out"; fail "Closed while mapped"; }
xs_wait $be/state 6 2
be_states_are $D 2 4 5 6
bk_sync	# blkbackd has done all it does on the frontend's Closed
xs_is $be/state 6	# blkbackd did not remove its directory
blkfront-test xl-remove --domid $D || fail "xl-remove failed"
xs_absent $be
bk_sync	# blkbackd has handled the removal
xs_absent $be		# nor recreated it
bk_forgot $D || fail "vbd $D was not forgotten: blkbackd holds \"$(bk_holds $D)\" of it"
stop_backend
exit 0
