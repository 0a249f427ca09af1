#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The new user's case: an nbd: vbd whose server died with a write
# acknowledged and not flushed fails its next flush (the server may have
# lost the write), and so the vbd (C15).  It stays failed for the guest
# that has it Connected across a blkbackd restart (taken over: ERROR,
# where a new blkbackd's fresh connection knows of no lost write), and
# the guest's reconnect is refused with the error node that says why,
# the vbd Closed, never a silent Connected.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
start_sim_backend
nbdkit_start srv --filter=log memory size=16M logfile="$BK_TMP/srv.nbdlog"
new_guest
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM "nbd:$NBD_URI,timeout=5"
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe step 1 timeout=30000
send op=flush id=2 nr_segments=0 expect=ERROR timeout=15000
xs-expect fe restart-done 1 timeout=60000
send op=write id=3 sector=16 seg=p0 expect=ERROR timeout=10000
send op=flush id=4 nr_segments=0 expect=ERROR timeout=10000
EOS
blkfront-test script --domid $DOM --max-indirect 16 --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "Write id=[0-9]* .*return=0" "$BK_TMP/srv.nbdlog" ||
	fail "the write never reached the server"
# the server dies with the write unflushed, and comes back (empty)
kill -KILL $NBDKIT_PID
nbdkit_start srv --filter=log memory size=16M logfile="$BK_TMP/srv2.nbdlog"
xenstore-write $fe/step 1
xs_wait $be/error "failed: lost-writes failed: Input/output error; device failed, acknowledged writes may not be durable"
stop_backend
xs_is $be/state 4
start_backend
wait_for 10 served_by $DOM "$(bk_pid)" || fail "the vbd was not taken over"
xenstore-write $fe/restart-done 1
wait $front || { cat "$BK_TMP/s.out"; fail "after the restart the failed vbd served requests"; }
# the guest reconnects: refused, Closed, the error node says why
blkfront-test script --domid $DOM --timeout 5000 --expect-no-connect /dev/null \
	> "$BK_TMP/r.out" 2>&1 || { cat "$BK_TMP/r.out"; fail "the failed vbd connected again"; }
xs_wait $be/state 6
err=$(xenstore-read $be/error)
grep -qE "^failed: the backing failed a flush at [0-9-]+ [0-9:]+ UTC \(lost-writes failed: Input/output error\); data written since its last good flush may be lost; not connected again: detach and reattach the disk to clear$" <<<"$err" ||
	fail "error node \"$err\""
stop_backend
exit 0
