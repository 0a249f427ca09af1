#!/usr/bin/env bash
# A connected frontend whose vbd the toolstack removes at once (xl-remove
# --force: both directories go, blkbackd is not asked to close first)
# notices at once, and gives up without waiting for a backend that
# cannot answer: attach --hold reports "went away" and, on SIGINT, exits
# 1 (the device broke) within seconds, not after the 30 s close wait.
# Its closing state writes never bring the removed frontend directory
# back (as Linux's __xenbus_switch_state).  A removed directory reads
# as ENOENT, or as EACCES once its parent is gone too.
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
wait_for 10 grep -q "backend $(be_dir) went away" "$FT/hold.err" ||
	{ cat "$FT/hold.err"; fail "attach --hold did not notice its backend going away"; }
t0=$EPOCHREALTIME
kill -INT $hold
rc=0
wait_for 10 eval "! kill -0 $hold 2>/dev/null" || fail "attach --hold did not exit within 10 s of SIGINT"
wait $hold || rc=$?
cat "$FT/hold.err"
[ "$rc" = 1 ] || fail "attach --hold: exit $rc after its device broke, expected 1"
awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { exit !(b - a < 10) }' || fail "SIGINT took 10 s or more"
xs_absent "$(fe_dir)"
xs_absent "$(be_dir)"
grep -q "vbd $DOM/51712: removed" "$BACKEND_LOG" || fail "blkbackd did not forget the vbd"
stop_backend
exit 0
