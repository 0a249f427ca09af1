#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A restart with other limits (BLKBACKD_OPTS changed, then a restart or
# an upgrade) serves a connected guest what it was offered.  The new
# blkbackd held the guest's rings to its own options: with
# --max-queues=1 or --max-ring-page-order=0 a guest on 4 queues or a
# 4-page ring was left alone as another backend's (its I/O hung), and
# with --max-indirect-segments=8 its 64 KiB indirect requests were
# refused.  The offer is in the backend directory (the probe keys):
# what a takeover holds the rings to.  Here a guest's verify (4 queues,
# 4-page rings, indirect requests, persistent grants) runs across a
# restart with every limit lowered and passes byte-exact; its next
# connect gets the new limits.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 16M
be=$(bk_be $DOM)
blkfront-test verify --domid $DOM --size 8M --count 4000 --bs 64k --iodepth 8 --queues 4 \
	--ring-order 2 --max-indirect 32 --timeout 30000 > "$BK_TMP/v.out" 2>&1 &
v=$!
cleanup_fn kill $v
wait_for 10 grep -q "vbd=$DOM/51712 ring=3 " "$BACKEND_TRACE" || fail "the guest's 4th queue never ran"
# The guest holds still across the restart (its rings stay connected;
# what it had in flight is answered by the old blkbackd's drain), so
# that its verify cannot end before the new blkbackd is seen serving
# its rings: a verify that ran out in the 2 s after the takeover, while
# the ledgers were still being read, failed this test once.
kill -STOP $v
cleanup_fn kill -CONT $v
stop_backend
start_backend --max-queues=1 --max-ring-page-order=0 --max-indirect-segments=8 \
	--feature-persistent=0
kill -0 $v 2>/dev/null || fail "the verify ended before the restart: the test proves nothing"
wait_for 30 served_by $DOM "$(bk_pid)" || fail "the new blkbackd does not serve the guest's rings"
kill -CONT $v
wait $v || { cat "$BK_TMP/v.out"; fail "the guest's verify failed across a restart with lower limits"; }
xs_absent "$be/error"
# the next connect is held to the new limits
blkfront-test attach --domid $DOM --queues 4 --ring-order 2 > "$BK_TMP/a.out" 2>&1 ||
	{ cat "$BK_TMP/a.out"; fail "the guest did not reconnect"; }
xs_is "$be/multi-queue-max-queues" 1
xs_is "$be/max-ring-page-order" 0
xs_is "$be/feature-max-indirect-segments" 8
xs_is "$be/feature-persistent" 0
stop_backend
exit 0
