#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest whose frontend reconnects while no blkbackd runs (blkbackd
# stopped for an upgrade; the guest reloads its driver: Closing, Closed,
# Initialising, a new ring, Initialised, against our stale Connected)
# is served by the next blkbackd.  It used to find a Connected vbd whose
# ring its recovery records did not match and leave it alone as another
# backend's: the backend stayed Connected with nobody behind it and the
# guest's I/O hung until the toolstack detached the disk.  The vbd is
# ours when our connect's record (blkbackd-knobs/) is still in its
# backend directory (the toolstack did not make it again, which is when
# another backend could have taken it): the new blkbackd connects it
# afresh, and the guest reads back what it wrote before (byte-exact).
# Without that record (a vbd another backend connected) it is still
# left alone.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
be=$(bk_be $DOM)
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe go 1 timeout=60000
xs-write fe state 5
xs-write fe state 6
xs-write fe state 1
ring-new wait=5000
xs-write fe state 3
xs-write fe reconnected 1
xs-expect be state 4 timeout=30000
send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=30000
check p1 seed:1
EOS
blkfront-test script --domid $DOM --max-indirect 16 --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "vbd=$DOM/51712 .* op=write id=1 .*status=0" "$BACKEND_TRACE" ||
	fail "the first write was not answered"
# B: the same, but its directory then holds no record of our connect,
# as when the toolstack made the vbd again and another backend took it
A=$DOM
new_guest; B=$DOM
truncate -s 4M "$BK_TMP/b.img"
add_disk $B "$BK_TMP/b.img"
sed '/^xs-expect be state 4/,$d' "$BK_TMP/s" > "$BK_TMP/s.B"
blkfront-test script --domid $B --max-indirect 16 --no-close "$BK_TMP/s.B" > "$BK_TMP/B.out" 2>&1 &
cleanup_fn kill $!
wait_for 10 grep -q "vbd=$B/51712 .* op=write id=1 .*status=0" "$BACKEND_TRACE" ||
	fail "B's first write was not answered"

stop_backend
for d in $A $B; do
	xs_is "$(bk_be $d)/state" 4
	xenstore-write "/local/domain/$d/device/vbd/51712/go" 1
	xs_wait "/local/domain/$d/device/vbd/51712/reconnected" 1 30
done
xenstore-rm "$(bk_be $B)/blkbackd-knobs"
start_backend
wait $front || { cat "$BK_TMP/s.out"; fail "the guest that reconnected while blkbackd was down was not served"; }
xs_is "$be/state" 4
xs_absent "$be/error"
blkbackd-ctl list > "$BK_TMP/list" || fail "list failed"
grep -qE "^$A/51712 +[^ ]+ +Connected " "$BK_TMP/list" || { cat "$BK_TMP/list"; fail "list does not show A Connected"; }
grep -qE "^$B/51712 +[^ ]+ +left-alone " "$BK_TMP/list" || { cat "$BK_TMP/list"; fail "B, with no record of our connect, was not left alone"; }
stop_backend
exit 0
