#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The toolstack's teardowns while a vbd drains (2 writes in flight, held
# in the store until the test lets them go).  Each step that follows the
# disconnect waits for the drain:
#  - xl-remove (online=0, state=5) and the guest closes its side:
#    Closed (6) only after both writes are answered, then the
#    directories go;
#  - xl-remove --force (directories removed at once): the device is
#    forgotten (xensim: blkbackd maps no grant and binds no port of the
#    guest, and holds none of its memory) only after both writes are
#    answered;
#  - the frontend's domain dies: Closed only after both are answered.
# Meanwhile, with the writes still held, another vbd connects and serves
# (liveness by order: it completes while the drain cannot); at the end
# SIGTERM exits 0.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
N=2

# hold_disk DOM: a disk on DOM whose I/O waits while $BK_TMP/hold-DOM exists
hold_disk() {
	hold=$BK_TMP/hold-$1
	touch "$hold"
	cleanup_fn rm -f "$hold"
	add_disk $1 "memory:4M,hold=$hold"
}

# another vbd connects and serves while $1 cannot drain
connects_meanwhile() {
	good_device_works memory:1M
	writes_answered $1 $N '-?[0-9]+' && fail "vbd $1 drained while its store held every write"
	return 0
}

# release DOM: DOM's held writes go ahead
release() {
	rm -f "$BK_TMP/hold-$1"
}

# 1. xl-remove: Closed only after the drain, then the directories go
new_guest; A=$DOM
hold_disk $A
writes_in_flight $A $N --no-close
blkfront-test xl-remove --domid $A > "$BK_TMP/rm.out" 2>&1 &
rm=$!
xs_wait "$(bk_be $A)/online" 0
# online=0 waits for the guest to close its side (Linux blkback; Linux
# blkfront closes on the backend's Closing, the script frontend does
# not): close it by hand, with the writes still in flight
xs_wait "$(bk_be $A)/state" 5
xenstore-write "/local/domain/$A/device/vbd/51712/state" 6
xs_is "$(bk_be $A)/state" 5	# Closing, not Closed, while the writes are held
connects_meanwhile $A
xs_is "$(bk_be $A)/state" 5
release $A
wait_for $(( N + 10 )) _xs_eq "$(bk_be $A)/state" 6 || xs_absent "$(bk_be $A)"
writes_answered $A $N || fail "vbd $A: Closed before every write was answered"
wait $rm || { cat "$BK_TMP/rm.out"; fail "xl-remove failed"; }
wait $front || { cat "$BK_TMP/w$A.out"; fail "vbd $A: the frontend did not get OKAY for every write"; }
wait_for 5 bk_forgot $A || fail "vbd $A: not forgotten: blkbackd still holds \"$(bk_holds $A)\" of it"

# 2. xl-remove --force: forgotten only after the drain
new_guest; B=$DOM
hold_disk $B
writes_in_flight $B $N --no-close
blkfront-test xl-remove --domid $B --force || fail "xl-remove --force failed"
xs_absent "$(bk_be $B)"
connects_meanwhile $B
[ "$(bk_holds $B)" != "0 0" ] || fail "vbd $B: forgotten before its drain"
release $B
wait_for $(( N + 10 )) bk_forgot $B || fail "vbd $B: never forgotten: blkbackd still holds \"$(bk_holds $B)\" of it"
writes_answered $B $N || fail "vbd $B: forgotten before every write was answered"
wait $front || { cat "$BK_TMP/w$B.out"; fail "vbd $B: the frontend did not get OKAY for every write"; }

# 3. the frontend's domain dies: Closed only after the drain
new_guest; C=$DOM
hold_disk $C
writes_in_flight $C $N --no-close
destroy_domain $C
wait_for 5 grep -q "vbd $C/51712: frontend domain $C is gone" "$BACKEND_LOG" ||
	fail "vbd $C: the domain's death was not noticed"
xs_is "$(bk_be $C)/state" 5	# Closing while it drains
connects_meanwhile $C
xs_is "$(bk_be $C)/state" 5
release $C
xs_wait "$(bk_be $C)/state" 6 $(( N + 10 ))
# (a write taken after the death fails its grant copy: any status)
writes_answered $C $N '-?[0-9]+' || fail "vbd $C: Closed before every write was answered"
kill $front 2>/dev/null; wait $front 2>/dev/null || true

stop_backend
exit 0
