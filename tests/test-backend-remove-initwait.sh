#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The toolstack removes a vbd whose frontend never connected (backend in
# InitWait): blkbackd forgets it and must not write into the removed
# directory, which would recreate it (a stale "state" node that makes the
# next xl-add of that devid fail; reported once, not reproduced since).
# Linux xenbus_switch_state() checks that the state node still exists.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
start_backend

removed_at_least() { # N: blkbackd logged N removals (re-read on every try)
	[ "$(grep -c 'vbd 1/51712: removed' "$BACKEND_LOG")" -ge "$1" ]
}

img=$BK_TMP/disk.img
truncate -s 4M "$img"
for i in 1 2 3; do
	add_vbd 1 51712 "$img"
	be=$(bk_be 1 51712)
	fe=/local/domain/1/device/vbd/51712
	xenstore-write "$fe/backend" "$be" "$fe/backend-id" 0 "$fe/state" 1
	xs_wait "$be/state" 2
	# as libxl does on removal: the frontend's directory, then ours
	xenstore-rm "$fe"
	xenstore-rm "$be"
	wait_for 10 removed_at_least "$i" ||
		fail "round $i: blkbackd did not forget the removed device"
	bk_sync	# blkbackd has handled the removal
	if xenstore-exists "$be"; then
		xenstore-ls -f "$be" >&2
		fail "round $i: blkbackd recreated $be after the toolstack removed it"
	fi
done
stop_backend
exit 0
