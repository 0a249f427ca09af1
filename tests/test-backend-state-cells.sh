#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The vbd state machine, cell by cell: for each state blkbackd can be in
# (InitWait, Connected, Closing after the frontend's Closing and still
# serving, Closing after an error, Closed) and each frontend state
# (1, 3, 4, 5, 6, 0, absent, garbage), the state blkbackd goes to, and
# whether the ring is still served.  The table and where it differs from
# Linux blkback's frontend_changed are in DESIGN-NOTES.md ("blkbackd",
# the vbd state machine).  The frontend here is a script holding its
# ring (its keys stay valid) while the test writes its state node; at
# each "ping" it writes and reads a block through the ring and answers
# "pong": served means that I/O completed, as the guest saw it; stopped
# means the hypervisor's grant ledger shows the ring unmapped.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:4M
{
	echo "fill p0 seed:1"
	echo "send op=write sector=0 seg=p0 expect=OKAY"
	for i in $(seq 1 40); do
		echo "xs-expect fe ping $i timeout=600000"
		echo "fill p1 seed:$((100 + i))"
		echo "send op=write sector=8 seg=p1 expect=OKAY timeout=10000"
		echo "send op=read sector=8 seg=p2 expect=OKAY timeout=10000"
		echo "check p2 seed:$((100 + i))"
		echo "xs-write fe pong $i"
	done
} > "$BK_TMP/hold"
blkfront-test script --domid $DOM --max-indirect 16 --no-close "$BK_TMP/hold" \
	> "$BK_TMP/hold.out" 2>&1 &
front=$!
cleanup_fn kill $front
xs_wait $be/state 4

fe_set() { # value | "absent"
	if [ "$1" = absent ]; then xenstore-rm $fe/state; else xenstore-write $fe/state "$1"; fi
}
# wait until our state is $1 and stays so: by bk_sync, blkbackd has
# acted on the frontend's write (its watch events are handled in order)
settle() {
	xs_wait $be/state "$1" 5
	bk_sync
	xs_is $be/state "$1"
}
# bring blkbackd to state name: 2 4 5 5f 6 (with the frontend's state
# that leads there; 5f: Closing after an error)
goto() {
	case $1 in
	2)  fe_set 6; settle 6; fe_set 1; settle 2 ;;
	4)  goto 2; fe_set 3; settle 4 ;;
	5)  goto 4; fe_set 5; settle 5 ;;
	5f) goto 4; fe_set 9; settle 5; xs_is $be/error \
		"state: the frontend's state \"9\" at $fe/state is not a XenbusState in 1..6" ;;
	6)  goto 4; fe_set 6; settle 6 ;;
	esac
}
# served: a write and a read through the ring complete now (the
# script's ping/pong), and no reconnect happened meanwhile (xensim: the
# ring's event channel still bound as it was, not bound again);
# stopped: dom0 no longer maps the ring (xensim's ledger) or it
# reconnected
ping=0
served() {
	ping=$((ping + 1))
	xenstore-write $fe/ping $ping
	wait_for 20 _xs_eq $fe/pong $ping || { cat "$BK_TMP/hold.out"; return 1; }
}
ring_mapped() {
	local ref
	ref=$(xenstore-read $fe/ring-ref 2>/dev/null || xenstore-read $fe/ring-ref0)
	xensim-ctl grants $DOM | grep -q "^$ref pins=[1-9][0-9]* writable=[0-9]* by=0\$"
}
# connects: xensim's port change count at which blkbackd's end of the
# ring's event channel was bound, or "none"
connects() {
	local evt line
	evt=$(xenstore-read $fe/event-channel 2>/dev/null) || { echo none; return 0; }
	line=$(_dom0_port $DOM "$evt")
	echo "${line:+${line##*since=}}${line:-none}"
}
served || fail "the ring does not carry I/O"
cells=0
# cell FROM FE WANT [served|stopped]: from blkbackd state FROM, the
# frontend writes FE; blkbackd must end in WANT; served: no disconnect
# happened (the ring is still served), stopped: one did
cell() {
	local from=$1 v=$2 want=$3 ring=${4:-} c0
	goto "$from"
	c0=$(connects)
	fe_set "$v"
	settle "$want" || true
	case $ring in
	served)
		served && [ "$(connects)" = "$c0" ] ||
			fail "cell ($from, $v): the ring was stopped" ;;
	stopped)
		[ "$(connects)" != "$c0" ] || ! ring_mapped ||
			fail "cell ($from, $v): the ring is still served" ;;
	esac
	echo "cell (blkbackd $from, frontend $v) -> $want${ring:+, ring $ring}"
	cells=$((cells + 1))
	# the frontend back to a state of its own, with its node
	[ "$v" = absent ] || [ "$v" = 9 ] || [ "$v" = 0 ] || return 0
	fe_set 6; settle 6
}
G=9
#    from  fe      want  ring
cell 2     1       2
cell 2     3       4
cell 2     4       4
cell 2     5       5
cell 2     6       6
cell 2     0       2
cell 2     absent  6
cell 2     $G      5
cell 4     1       2     stopped
cell 4     3       4     served
cell 4     4       4     served
cell 4     5       5     served
cell 4     6       6     stopped
cell 4     0       6     stopped
cell 4     absent  6     stopped
cell 4     $G      5
cell 5     1       2     stopped
cell 5     3       4     stopped
cell 5     4       4     stopped
cell 5     5       5     served
cell 5     6       6     stopped
cell 5     0       6     stopped
cell 5     absent  6     stopped
cell 5     $G      5
cell 5f    1       5
cell 5f    3       5
cell 5f    4       5
cell 5f    5       5
cell 5f    6       6
cell 5f    0       6
cell 5f    absent  6
cell 6     1       2
cell 6     3       4
cell 6     4       4
cell 6     5       5
cell 6     6       6
cell 6     0       6
cell 6     absent  6
cell 6     $G      5
echo "$cells cells"

# the toolstack's close (online=0 and state 5, as libxl): Closing at
# once, the ring served until the frontend is Closed, then Closed
goto 4
xenstore-write $be/online 0 $be/state 5
settle 5
served || fail "toolstack close: the ring was stopped before the frontend closed"
fe_set 5; settle 5
fe_set 6; settle 6
xs_is $be/online 0

# a frontend Closed since blkbackd serves the vbd (a restart): InitWait
# stays, until it writes Initialising
kill $front; wait $front 2>/dev/null || true
stop_backend
xenstore-write $be/online 1 $be/state 1 $fe/state 6
start_backend
settle 2
fe_set 1; settle 2
fe_set 6; settle 6	# now it was alive: Closed, as Linux
exit 0
