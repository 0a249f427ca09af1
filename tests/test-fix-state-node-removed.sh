#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A toolstack that removes one key of a connected vbd's backend
# directory, its state node among them, does not take the disk from the
# guest.  blkbackd used to key a vbd's life on <backend>/state: removing
# it (xenstore-rm, a toolstack's bug or a script's) made blkbackd forget
# the vbd, unmap its ring and leave the still-Connected guest's requests
# unanswered.  As Linux's xenbus, a vbd now lives while its directory
# does: the guest reads back byte-exact what it wrote before, writes
# again, and blkbackd-ctl still lists the vbd; removing the directory
# itself still ends it (blkbackd lets go of the ring and the event
# channel).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
be=$(bk_be $DOM)
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:7
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe go 1 timeout=60000
send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=10000
check p1 seed:7
send op=write id=3 sector=64 seg=p1 expect=OKAY timeout=10000
EOS
blkfront-test script --domid $DOM --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "vbd=$DOM/51712 .* op=write id=1 .*status=0" "$BACKEND_TRACE" ||
	fail "the first write was not answered"
xenstore-rm "$be/state"
# the event of that removal reaches blkbackd's control thread before
# bk_sync's new vbd does
bk_sync
xenstore-write "/local/domain/$DOM/device/vbd/51712/go" 1
wait $front || { cat "$BK_TMP/s.out"; fail "the guest was not served after <backend>/state was removed"; }
blkbackd-ctl list > "$BK_TMP/list" || fail "list failed"
grep -qE "^$DOM/51712 +[^ ]+ +Connected " "$BK_TMP/list" || { cat "$BK_TMP/list"; fail "list does not show the vbd Connected"; }
# the ring and the persistent grants mapped, one event channel bound
held=$(bk_holds $DOM)
[ "${held% *}" -ge 1 ] && [ "${held#* }" = 1 ] || fail "blkbackd holds $held (maps, event channels) of the guest's"
xenstore-rm "$be"
wait_for 10 bk_forgot $DOM || fail "the vbd's directory removed, blkbackd still holds $(bk_holds $DOM)"
stop_backend
exit 0
