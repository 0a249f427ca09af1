#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd --cache=volatile models a disk with a write cache: what a
# guest wrote and did not flush is lost at a power cut (SIGUSR2), not
# when the guest reconnects.  The vbd's store stack is closed at each
# disconnect, and its close used to drop the cached writes: a guest that
# reloaded its driver read back zeros where it had written, though the
# modelled disk never lost power.  Now the close writes them back to the
# store below (not flushed: a close is no flush), as the disk's cache
# would on its own.  Seen from the guest: a write, no flush, a
# reconnect (Closing, Closed, Initialising, a new ring, Initialised),
# then the same sectors read back byte-exact; and the backing file
# holds them once the backend is gone.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --cache=volatile
guest_with_disk 4M
disk=$img
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:7
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-write fe state 5
xs-write fe state 6
xs-expect be state 6 timeout=30000
xs-write fe state 1
ring-new wait=5000
xs-write fe state 3
xs-expect be state 4 timeout=30000
send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=30000
check p1 seed:7
EOS
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 ||
	{ cat "$BK_TMP/s.out" "$BACKEND_LOG"; fail "the unflushed write was not read back after the guest reconnected"; }
grep -q 'write cache of up to' "$BACKEND_LOG" || fail "blkbackd did not stack the volatile cache"
stop_backend
# and it reached the backing file (written back, not lost at the close)
[ -n "$(dd if="$disk" bs=512 skip=8 count=8 status=none | tr -d '\0' | head -c 1)" ] ||
	fail "sectors 8-15 of the backing file are zeros after the close"
exit 0
