#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd written by hand with xenstore-write (as README "Serving a disk by
# hand" shows) reaches InitWait with exactly Linux blkback's probe keys;
# online=0 + Closing from the toolstack closes it (state 6); removing the
# directory forgets it; blkbackd exits 0 on SIGTERM, and with
# --close-on-exit closes every device it served.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
start_backend --max-queues=2 --max-ring-page-order=3 --close-on-exit

img=$BK_TMP/disk.img
truncate -s 4M "$img"
add_vbd 1 51712 "$img"
be=$(bk_be 1 51712)
xs_wait "$be/state" 2
xs_is "$be/max-ring-page-order" 3
xs_is "$be/multi-queue-max-queues" 2
xs_is "$be/feature-max-indirect-segments" 256	# Linux blkback's offer
xs_absent "$be/error"
# nothing of the connect phase yet
xs_absent "$be/sectors"
xs_absent "$be/feature-flush-cache"

# a second device of another frontend, with a memory store
add_vbd 2 51728 memory:1M
xs_wait "$(bk_be 2 51728)/state" 2

# toolstack teardown (libxl): online=0 and state=5 -> Closed
xenstore-write "$be/online" 0 "$be/state" 5
xs_wait "$be/state" 6
# the other device is untouched
xs_is "$(bk_be 2 51728)/state" 2

xenstore-rm "$be"
wait_for 10 grep -q "vbd 1/51712: removed" "$BACKEND_LOG" ||
	fail "blkbackd did not forget the removed device"
stop_backend
# --close-on-exit: a clean shutdown closes every device it served
xs_is "$(bk_be 2 51728)/state" 6
grep -q "error:" "$BACKEND_LOG" && { cat "$BACKEND_LOG"; fail "errors in the log"; }
exit 0
