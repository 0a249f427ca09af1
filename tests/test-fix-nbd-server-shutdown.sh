#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An nbd: vbd whose server is stopped the orderly way: nbdkit, on
# SIGTERM, answers every new request ESHUTDOWN and waits for its clients
# to disconnect.  The store used to keep the connection: every request
# failed, no reconnect was tried, the server never exited, and the
# guest's next flush failed the vbd for good though nothing had been
# written since its last good flush.  Now: the request that met the
# shutdown is ERROR (the server did not do it), the connection is
# dropped so the server exits, the flush with nothing to cover is OKAY
# (the vbd is not failed), and once a server is back on the socket the
# data written before is read back and writes work again.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
start_sim_backend
img=$BK_TMP/disk.img
truncate -s 16M "$img"
nbdkit_start srv file "$img"
new_guest
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM "nbd:$NBD_URI,timeout=5"
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:5
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=flush id=2 nr_segments=0 expect=OKAY
xs-expect fe step 1 timeout=30000
send op=read id=3 sector=8 seg=p1 expect=ERROR timeout=15000
send op=flush id=4 nr_segments=0 expect=OKAY timeout=15000
xs-expect fe step 2 timeout=30000
send op=read id=5 sector=8 seg=p2 expect=OKAY timeout=15000
check p2 seed:5
send op=write id=6 sector=16 seg=p0 expect=OKAY timeout=15000
send op=flush id=7 nr_segments=0 expect=OKAY timeout=15000
EOS
blkfront-test script --domid $DOM --max-indirect 16 --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q " op=flush id=2 .*status=0" "$BACKEND_TRACE" || fail "the first flush was not answered"
old=$NBDKIT_PID
kill -TERM $old
# the guest's next read must meet the shutdown, not come before nbdkit
# has taken the signal: it logs nothing, but the kernel shows the
# signal pending on the process until nbdkit has handled it
sig_pending() { grep -qE '^(ShdPnd|SigPnd):[[:space:]]*0*[1-9a-f]' "/proc/$1/status"; }
wait_for 10 eval "! sig_pending $old" || fail "nbdkit never took its SIGTERM"
xenstore-write $fe/step 1
# nbdkit exits once its last client has gone: the store let it go
wait_for 20 eval "! kill -0 $old 2>/dev/null" ||
	fail "nbdkit, stopped with SIGTERM, still runs: blkbackd kept its connection"
wait_for 20 grep -q " op=flush id=4 " "$BACKEND_TRACE" || fail "the flush after the stop was not answered"
xs_absent $be/blkbackd-failed
nbdkit_start srv file "$img"
sleep 1.5	# the store tries a reconnect at most once a second
xenstore-write $fe/step 2
wait $front || { cat "$BK_TMP/s.out"; fail "the guest's requests did not get the answers expected"; }
xs_absent $be/blkbackd-failed
xs_is $be/state 4
xs_absent $be/error
stop_backend
exit 0
