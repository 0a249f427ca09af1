#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xenstore fires the watch on a vbd's directory node when the node is
# only written or given new permissions, as it does when the node is
# removed or made again.  An administrator's xenstore-chmod on a running
# guest's vbd (with or without -r), or a write of the node's own value,
# must leave the Connected vbd served as it was: no backend state write,
# the same blkbackd mapping the guest's rings, the guest's I/O going on,
# byte-exact to the last block.  (blkbackd took each such event as
# "removed", closed the vbd's queues and, finding it Connected without a
# record of its own, left it to "another backend": the guest's disk
# stalled for good.)  The other half of the rule -- a node removed and
# made again is a new vbd -- is test-backend-readd's.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend

new_guest
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM memory:8M
timeout --foreground 300 blkfront-test verify --domid $DOM --queues 2 --bs 64k --size 8M \
	--count 100000000 --iodepth 8 --flush-every 20 --timeout 30000 \
	> "$BK_TMP/verify.out" 2>&1 &
vpid=$!
cleanup_fn kill $vpid
xs_wait $fe/state 4
serving() { served_by $DOM "$(bk_pid)"; }
wait_for 60 serving || fail "no daemon serves the vbd"
xs_record "$BK_TMP/watch"

xenstore-chmod $be n0 r$DOM
bk_sync
xenstore-chmod -r $be n0 r$DOM
bk_sync
xenstore-write $be ""
bk_sync

xs_is $be/state 4
xs_absent $be/error
serving || fail "the vbd is no longer served by blkbackd after a chmod of its directory"
n=$(awk -v p="$be/state" '$1 == p { n++ } END { print n + 0 }' "$BK_TMP/watch")
# one event: chmod -r's own, on every node below (a write would be more)
[ "$n" = 1 ] || fail "the backend state changed $((n - 1)) times after a chmod of its directory"
verify_stop $vpid "$BK_TMP/verify.out" 128
stop_backend
exit 0
