#!/usr/bin/env bash
# The toolstack's teardowns while a vbd drains (2 writes of 1 s each in
# flight).  Each step that follows the disconnect waits for the drain:
#  - xl-remove (online=0, state=5) and the guest closes its side:
#    Closed (6) only after both writes are answered, within libxl's
#    10 s, then the directories go;
#  - xl-remove --force (directories removed at once): the device is
#    forgotten ("removed") only after both writes are answered;
#  - the frontend's domain dies: Closed only after both are answered.
# Meanwhile another vbd connects at once; at the end SIGTERM exits 0.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
N=2 limit=1.5
if [ "${BLK_VALGRIND:-}" = 1 ]; then N=5 limit=3; fi

# another vbd connects and serves while one drains
connects_meanwhile() {
	local t0=$EPOCHREALTIME
	good_device_works memory:1M
	awk -v a=$t0 -v b=$EPOCHREALTIME -v l=$limit 'BEGIN { exit !(b - a < l) }' ||
		fail "a new vbd took more than $limit s to connect and do I/O during a drain"
	writes_answered $1 $N '-?[0-9]+' && fail "vbd $1 had drained already: the test proves nothing"
	return 0
}

# 1. xl-remove: Closed only after the drain, then the directories go
new_guest; A=$DOM
add_disk $A memory:4M,delay-ms=1000
writes_in_flight $A $N --no-close
blkfront-test xl-remove --domid $A > "$BK_TMP/rm.out" 2>&1 &
rm=$!
xs_wait "$(bk_be $A)/online" 0
# online=0 waits for the guest to close its side (Linux blkback; Linux
# blkfront closes on the backend's Closing, the script frontend does
# not): close it by hand, with the writes still in flight
xs_wait "$(bk_be $A)/state" 5
xenstore-write "/local/domain/$A/device/vbd/51712/state" 6
connects_meanwhile $A
wait_for $(( N + 10 )) _xs_eq "$(bk_be $A)/state" 6 || xs_absent "$(bk_be $A)"
writes_answered $A $N || fail "vbd $A: Closed before every write was answered"
wait $rm || { cat "$BK_TMP/rm.out"; fail "xl-remove failed"; }
wait $front || { cat "$BK_TMP/w$A.out"; fail "vbd $A: the frontend did not get OKAY for every write"; }
wait_for 5 grep -q "vbd $A/51712: removed" "$BACKEND_LOG" || fail "vbd $A: not forgotten"

# 2. xl-remove --force: forgotten only after the drain
new_guest; B=$DOM
add_disk $B memory:4M,delay-ms=1000
writes_in_flight $B $N --no-close
blkfront-test xl-remove --domid $B --force || fail "xl-remove --force failed"
xs_absent "$(bk_be $B)"
connects_meanwhile $B
grep -q "vbd $B/51712: removed" "$BACKEND_LOG" && fail "vbd $B: forgotten before its drain"
wait_for $(( N + 10 )) grep -q "vbd $B/51712: removed" "$BACKEND_LOG" || fail "vbd $B: never forgotten"
writes_answered $B $N || fail "vbd $B: forgotten before every write was answered"
wait $front || { cat "$BK_TMP/w$B.out"; fail "vbd $B: the frontend did not get OKAY for every write"; }

# 3. the frontend's domain dies: Closed only after the drain
new_guest; C=$DOM
add_disk $C memory:4M,delay-ms=1000
writes_in_flight $C $N --no-close
destroy_domain $C
wait_for 5 grep -q "vbd $C/51712: frontend domain $C is gone" "$BACKEND_LOG" ||
	fail "vbd $C: the domain's death was not noticed"
connects_meanwhile $C
xs_is "$(bk_be $C)/state" 5	# Closing while it drains
xs_wait "$(bk_be $C)/state" 6 $(( N + 10 ))
# (a write taken after the death fails its grant copy: any status)
writes_answered $C $N '-?[0-9]+' || fail "vbd $C: Closed before every write was answered"
kill $front 2>/dev/null; wait $front 2>/dev/null || true

stop_backend
exit 0
