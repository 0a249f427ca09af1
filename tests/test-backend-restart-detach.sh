#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest still using its disk when the toolstack detaches it (online=0
# and state 5, libxl's device removal) while no blkbackd runs: the next
# blkbackd serves its ring until the frontend closes, as a running one
# does (Linux blkfront keeps a disk that is in use through the backend's
# Closing, and its I/O goes on).  The guest's write after the restart is
# answered OKAY by the new daemon and reads back byte-exact with the one
# before; the backend stays Closing throughout (a xenstore watch sees no
# write of its state), with no error, and goes
# Closed once the frontend has closed.  (The new daemon used to serve no
# ring there: the guest's I/O hung until it closed.)
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe restart-done 1 timeout=60000
fill p1 seed:2
send op=write id=2 sector=16 seg=p1 expect=OKAY timeout=10000
send op=flush id=3 nr_segments=0 expect=OKAY timeout=10000
send op=read id=4 sector=8 seg=p2 expect=OKAY timeout=10000
check p2 seed:1
send op=read id=5 sector=16 seg=p3 expect=OKAY timeout=10000
check p3 seed:2
xs-write fe at done
xs-expect fe go done timeout=60000
EOS
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q " op=write id=1 .*status=0" "$BACKEND_TRACE" || fail "the first write was not answered"

stop_backend
xs_is "$be/state" 4
# libxl's device removal, while no blkbackd runs
xenstore-write "$be/online" 0 "$be/state" 5
: > "$BACKEND_TRACE"
# every xenstore change from here on, in order
xs_record "$BK_TMP/watch"
start_backend
wait_for 30 served_by $DOM "$(bk_pid)" || fail "the new daemon does not serve the ring"
bk_sync "$BK_TMP/watch"	# whatever the new daemon does to the vbd, it has done it by now
n=$(be_writes_before_fe "$BK_TMP/watch" $DOM)
[ "$n" = 0 ] || fail "the new daemon wrote the backend state $n times"
xs_is "$be/state" 5
xenstore-write "$fe/restart-done" 1
wait_for 30 _xs_eq "$fe/at" done ||
	{ cat "$BK_TMP/s.out"; fail "the guest's I/O was not served after the restart"; }
grep -q " op=write id=2 .*status=0" "$BACKEND_TRACE" || fail "the new daemon did not serve the write"
xs_is "$be/state" 5
xs_is "$fe/state" 4
xs_absent "$be/error"
# the guest closes now (Closing, then Closed, as the script ends)
xenstore-write "$fe/go" done
wait $front || { cat "$BK_TMP/s.out"; fail "the guest's script failed"; }
xs_wait "$be/state" 6
xs_is "$be/online" 0
xs_absent "$be/error"
stop_backend
exit 0
