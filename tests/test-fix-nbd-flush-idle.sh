#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An nbd: vbd whose server is down, with every acknowledged write
# already flushed: the guest's periodic empty flush has nothing to make
# durable and succeeds, so the vbd is not failed (a failed flush fails
# it for good) by a server restart.  Once the server is back, reads and
# writes work again.  Its write while the server is down fails.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
start_sim_backend
nbdkit_start srv memory size=16M
new_guest
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM "nbd:$NBD_URI,timeout=5"
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=flush id=2 nr_segments=0 expect=OKAY
xs-expect fe step 1 timeout=30000
send op=flush id=3 nr_segments=0 expect=OKAY timeout=15000
send op=write id=4 sector=8 seg=p0 expect=ERROR timeout=15000
xs-expect fe step 2 timeout=30000
send op=write id=5 sector=16 seg=p0 expect=OKAY timeout=15000
send op=flush id=6 nr_segments=0 expect=OKAY timeout=15000
send op=read id=7 sector=16 seg=p1 expect=OKAY timeout=15000
check p1 seed:1
EOS
blkfront-test script --domid $DOM --max-indirect 16 --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q " op=flush id=2 .*status=0" "$BACKEND_TRACE" || fail "the first flush was not answered"
kill -KILL $NBDKIT_PID
wait_for 10 eval "! kill -0 $NBDKIT_PID 2>/dev/null"
xenstore-write $fe/step 1
wait_for 20 grep -q " op=write id=4 " "$BACKEND_TRACE" || fail "the write while down was not answered"
xs_absent $be/blkbackd-failed
nbdkit_start srv memory size=16M
sleep 1.5	# the store tries a reconnect at most once a second
xenstore-write $fe/step 2
wait $front || { cat "$BK_TMP/s.out"; fail "the guest's requests did not get the answers expected"; }
xs_is $be/state 4
xs_absent $be/error
stop_backend
exit 0
