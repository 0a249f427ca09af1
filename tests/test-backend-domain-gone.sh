#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The frontend's domain dies while connected (xensim-ctl destroy-domain,
# @releaseDomain): blkbackd notices, disconnects (unmaps the ring, unbinds
# the event channel) and writes Closed; other devices go on; SIGTERM exits 0.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest; victim=$DOM
add_disk $victim memory:4M
blkfront-test attach --domid $victim --hold > "$BK_TMP/attach.out" 2>&1 &
front=$!
cleanup_fn kill $front
xs_wait "$(bk_be $victim)/state" 4
xensim-ctl --dir "$XENSIM_DIR" destroy-domain $victim
xs_wait "$(bk_be $victim)/state" 6
grep -q "vbd $victim/51712: frontend domain $victim is gone" "$BACKEND_LOG" ||
	grep -q "vbd $victim/51712: disconnected" "$BACKEND_LOG" || fail "no disconnect logged"
kill $front 2>/dev/null || true
wait $front 2>/dev/null || true
good_device_works memory:4M
stop_backend
exit 0
