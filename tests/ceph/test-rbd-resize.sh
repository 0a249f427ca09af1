#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Online resize from the cluster: "rbd resize" (here as another client
# would, from any host) reaches blkbackd through librbd's header watch;
# blkbackd writes "sectors" and re-writes "state" in one transaction
# (Linux xen_blkbk_resize), the frontend's watch fires and blkfront-test
# re-reads the capacity.  Grow, then shrink.  Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
start_sim_backend
new_disk 8M
new_guest
add_disk $DOM "$params"
be=$(bk_be $DOM)
blkfront-test attach --domid $DOM --hold >"$BK_TMP/attach.out" 2>"$BK_TMP/attach.err" &
front=$!
cleanup_fn kill $front
xs_wait "$be/state" 4
xs_is "$be/sectors" 16384
# every change of the state node, from now on (the first line is the
# watch's initial event)
xenstore-watch "$be/state" >"$BK_TMP/watch" 2>&1 &
watch=$!
cleanup_fn kill $watch
wait_for 10 test -s "$BK_TMP/watch" || fail "xenstore-watch did not start"

timeout 60 rbd -c "$CEPH_CONF" resize --no-progress --size 24M "$img" || fail "rbd resize (grow)"
xs_wait "$be/sectors" 49152 20
xs_is "$be/state" 4
wait_for 10 grep -q "vbd $DOM/51712: backing resized: 16384 -> 49152 sectors" "$BACKEND_LOG" ||
	fail "blkbackd did not log the resize"
wait_for 10 grep -q "backend resized: capacity 16384 -> 49152 sectors" "$BK_TMP/attach.err" ||
	{ cat "$BK_TMP/attach.err"; fail "blkfront-test did not notice the new capacity"; }
# the state node was written again (the frontend's trigger)
wait_for 10 test "$(grep -c "^$be/state\$" "$BK_TMP/watch")" -ge 2 ||
	{ cat "$BK_TMP/watch"; fail "state was not re-written with sectors"; }

timeout 60 rbd -c "$CEPH_CONF" resize --no-progress --allow-shrink --size 4M "$img" ||
	fail "rbd resize (shrink)"
xs_wait "$be/sectors" 8192 20
wait_for 10 grep -q "backend resized: capacity 49152 -> 8192 sectors" "$BK_TMP/attach.err" ||
	{ cat "$BK_TMP/attach.err"; fail "blkfront-test did not notice the shrink"; }
kill -TERM $front
wait $front 2>/dev/null || true
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"

# a fresh connection sees the new size and can use all of it
add_disk $DOM "$params"
xs_wait "$be/state" 2
cat > "$BK_TMP/s" <<'EOS'
xs-expect be sectors 8192
fill p0 seed:9
send op=write id=1 sector=8184 seg=p0 expect=OKAY
send op=read id=2 sector=8184 seg=p1 expect=OKAY
check p1 seed:9
send op=read id=3 sector=8192 seg=p1 expect=ERROR
EOS
run_script $DOM "$BK_TMP/s"
stop_backend
exit 0
