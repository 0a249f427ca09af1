#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A full --state-dir refuses a new connect, and only that one.  Each
# Connected queue keeps a recovery record there, a small file blkbackd
# maps; its blocks are allocated when it is made, so a filesystem with
# no room left answers ENOSPC then (the new guest's connect fails, its
# error node says why) rather than a bus error at the first store
# through the mapping, which would kill the daemon and stall every
# guest.  A guest already connected keeps its disk, and a connect after
# room is made works.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
sd=$BK_TMP/state
mkdir -p "$sd"
mount -t tmpfs -o size=1M,mode=0700 blkbackd-test-state "$sd" || fail "mount tmpfs"
cleanup_fn umount -l "$sd"
start_sim_backend --state-dir="$sd"

# A: connected (its record made while there was room), held
new_guest; domA=$DOM
add_disk $domA memory:1M
blkfront-test attach --domid $domA --hold > "$BK_TMP/a.out" 2> "$BK_TMP/a.err" &
apid=$!
cleanup_fn kill -KILL $apid
xs_wait "$(bk_be $domA)/state" 4

dd if=/dev/zero of="$sd/fill" bs=64k 2>/dev/null && fail "the 1M tmpfs did not fill"
# B: its record cannot be made: refused, with the reason
new_guest
add_disk $DOM memory:1M
blkfront-test script --domid $DOM --expect-no-connect /dev/null ||
	fail "a guest connected with no room for its recovery record"
wait_for 10 xenstore-read "$(bk_be $DOM)/error" >/dev/null || fail "no error node"
case "$(xenstore-read "$(bk_be $DOM)/error")" in
*"recovery record"*"No space left on device"*) ;;
*) fail "error node: \"$(xenstore-read "$(bk_be $DOM)/error")\"" ;;
esac
kill -0 "$(bk_pid)" || fail "blkbackd died"

# room again: A still answers its close, and a new guest does I/O
rm "$sd/fill"
kill -TERM $apid
wait $apid || { cat "$BK_TMP/a.err"; fail "A's attach --hold did not close cleanly"; }
xs_is "$(bk_be $domA)/state" 6
good_device_works memory:1M
stop_backend
exit 0
