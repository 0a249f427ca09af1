#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A connected frontend whose vbd the toolstack removes at once (xl-remove
# --force: both directories go, blkbackd is not asked to close first)
# notices at once, and gives up without waiting for a backend that
# cannot answer: attach --hold reports "went away" and exits 1 (the
# device broke) within seconds, not after the 30 s close wait.  It closes
# by itself once its device broke; the SIGINT sent here may find it gone
# already (a slow host, valgrind), or may be what ends its hold.
# Its closing state writes never bring the removed frontend directory
# back (as Linux's __xenbus_switch_state).  A removed directory reads
# as ENOENT, or as EACCES once its parent is gone too.
# 2. The same when only the frontend's own directory is removed.
# 3. The backend's directory goes while the frontend waits for it to
# close: the wait ends at once (a removed backend cannot answer), not
# after the frontend's timeout.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend
add_disk $DOM memory:1M
blkfront-test attach --domid $DOM --hold > "$FT/hold.out" 2> "$FT/hold.err" &
hold=$!
_kill_hold() { kill -KILL "$1" 2>/dev/null || true; }
cleanup_fn _kill_hold $hold
xs_wait "$(be_dir)/state" 4
xs_wait "$(fe_dir)/state" 4
blkfront-test xl-remove --domid $DOM --force || fail "xl-remove --force failed"
# (xl-remove takes the frontend's directory first: either is noticed)
wait_for 10 grep -q -e "backend $(be_dir) went away" -e "frontend $(fe_dir) was removed" "$FT/hold.err" ||
	{ cat "$FT/hold.err"; fail "attach --hold did not notice its vbd going away"; }
kill -INT $hold 2>/dev/null || true	# it may have closed by itself already
rc=0
wait_for 10 eval "! kill -0 $hold 2>/dev/null" || fail "attach --hold did not exit within 10 s of its device breaking"
wait $hold || rc=$?
cat "$FT/hold.err"
[ "$rc" = 1 ] || fail "attach --hold: exit $rc after its device broke, expected 1"
xs_absent "$(fe_dir)"
xs_absent "$(be_dir)"
grep -q "vbd $DOM/51712: removed" "$BACKEND_LOG" || fail "blkbackd did not forget the vbd"

# 2. Only the frontend directory goes (the backend's stays): the device
# is gone, as when Linux's xenbus core unregisters it.  attach --hold
# notices by itself (blkbackd is stopped meanwhile, so its Closed cannot
# be what tells it) and exits 1 once blkbackd, let go, disconnects and
# writes Closed (Unknown: the node gone); nothing brings the directory
# back.
add_disk $DOM memory:1M --devid 51728
blkfront-test attach --domid $DOM --devid 51728 --hold > "$FT/hold2.out" 2> "$FT/hold2.err" &
hold=$!
cleanup_fn _kill_hold $hold
xs_wait "$(be_dir 51728)/state" 4
xs_wait "$(fe_dir 51728)/state" 4
kill -STOP "$(bk_pid)"
cleanup_fn kill -CONT "$(bk_pid)"
xenstore-rm "$(fe_dir 51728)"
wait_for 10 grep -q "frontend $(fe_dir 51728) was removed" "$FT/hold2.err" ||
	{ cat "$FT/hold2.err"; fail "attach --hold did not notice its frontend directory going"; }
kill -CONT "$(bk_pid)"
rc=0
wait_for 20 eval "! kill -0 $hold 2>/dev/null" ||
	{ cat "$FT/hold2.err"; fail "attach --hold did not exit after its frontend directory went"; }
wait $hold || rc=$?
cat "$FT/hold2.err"
[ "$rc" = 1 ] || fail "attach --hold: exit $rc after its frontend directory went, expected 1"
xs_wait "$(be_dir 51728)/state" 6
xs_absent "$(fe_dir 51728)"
blkfront-test xl-remove --domid $DOM --devid 51728 --force || fail "xl-remove --force (2) failed"

# 3. The backend goes Closing (written here, blkbackd stopped so that it
# never reaches Closed); attach --hold closes its side and waits for the
# backend's Closed; then the backend's directory is removed.  The wait
# ends there, within seconds, not after --timeout (120 s): blkbackd's
# Closed will never come.
add_disk $DOM memory:1M --devid 51744
blkfront-test attach --domid $DOM --devid 51744 --hold --timeout 120000 \
	> "$FT/hold3.out" 2> "$FT/hold3.err" &
hold=$!
cleanup_fn _kill_hold $hold
xs_wait "$(be_dir 51744)/state" 4
xs_wait "$(fe_dir 51744)/state" 4
kill -STOP "$(bk_pid)"
xenstore-write "$(be_dir 51744)/state" 5
xs_wait "$(fe_dir 51744)/state" 6
xenstore-rm "$(be_dir 51744)"
# blkbackd, let go, sees its directory gone and unmaps the ring, which
# the frontend's teardown waits for (as gnttab_end_foreign_access)
kill -CONT "$(bk_pid)"
wait_for 15 eval "! kill -0 $hold 2>/dev/null" ||
	{ cat "$FT/hold3.err"; fail "attach --hold still waits for a backend whose directory is gone"; }
rc=0
wait $hold || rc=$?
cat "$FT/hold3.err"
[ "$rc" = 1 ] || fail "attach --hold: exit $rc after its backend went, expected 1"
grep -q "backend $(be_dir 51744) went away while we closed" "$FT/hold3.err" ||
	fail "attach --hold did not say why it stopped waiting"
wait_for 10 grep -q "vbd $DOM/51744: removed" "$BACKEND_LOG" || fail "blkbackd did not forget vbd 51744"
blkfront-test xl-remove --domid $DOM --devid 51744 --force || fail "xl-remove --force (3) failed"
xs_absent "$(fe_dir 51744)"
stop_backend
exit 0
