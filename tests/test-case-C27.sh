#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C27: a reconnect with I/O in flight and reused ids.  The guest sends
# WRITE id=7 (pattern A) to sector 0, which the store holds (hold=) until
# the test lets it go; once blkbackd has taken it (xensim's ledger shows
# the data page's grant mapped: a request still on the ring when the
# frontend closes is never taken, as in Linux blkback, whose ring thread
# stops there, so a close sent at once could beat the queue thread to it)
# the guest goes 5, 6, 1 and, once the write is answered, sets up a new
# ring; then WRITE id=7 (pattern B) to sector 0 and READ
# id=8 on the new ring.  All seen by the guest:
#  - while the old write is held the backend stays Closing: no Closed, no
#    InitWait for a new ring before the drain;
#  - the old write's response is on the old ring (ring 0), there before
#    blkbackd unmaps that ring;
#  - exactly one id=7 response on the new ring (any other response
#    fails the script);
#  - id=8 reads B, never A;
#  - nothing is written to the old ring after it was unmapped: ring-new
#    ends access to it once blkbackd unmapped it.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
hold=$BK_TMP/hold
touch "$hold"
cleanup_fn rm -f "$hold"
add_disk $DOM "memory:4M,hold=$hold"
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:71
send op=write id=7 sector=0 seg=p0
xs-expect fe taken 1 timeout=600000
xs-write fe state 5
xs-expect be state 5 timeout=10000
xs-write fe state 6
xs-write fe state 1
expect-none timeout=300
xs-expect be state 5 timeout=0
xs-write fe release 1
ring-new wait=10000
wait id=7 ring=0 status=OKAY timeout=0
xs-expect be state 2 timeout=5000
xs-write fe state 3
xs-expect be state 4 timeout=5000
fill p1 seed:72
send op=write id=7 sector=0 seg=p1 expect=OKAY timeout=5000
send op=read id=8 sector=0 seg=p2 expect=OKAY timeout=5000
check p2 seed:72
expect-none timeout=300
close
EOS
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
# taken: blkbackd maps the ring's page and, once it took the write, its
# data page (a hang bound only: the script waits for it)
taken() { [ "$(xensim-ctl maps "$DOM" | grep -c " pid=$(bk_pid) ")" -ge 2 ] || ! kill -0 $front 2>/dev/null; }
wait_for 600 taken || fail "blkbackd did not map the write's page"
xenstore-write "/local/domain/$DOM/device/vbd/51712/taken" 1
# the guest has seen Closing held through its 6 and 1: let the write go
released() { _xs_eq "/local/domain/$DOM/device/vbd/51712/release" 1 || ! kill -0 $front 2>/dev/null; }
wait_for 30 released || fail "the guest's script neither failed nor got to its release"
rm -f "$hold"
wait $front || { cat "$BK_TMP/s.out"; fail "the guest's script failed (above)"; }
stop_backend
exit 0
