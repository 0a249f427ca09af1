#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A cluster that stops answering: the OSD is stopped (SIGSTOP) under a
# vbd whose params set rados_osd_op_timeout=3.  A WRITE then gets ERROR
# after about 3 s (never a request that hangs for ever); blkbackd and a
# second guest's vbd on a file keep working meanwhile; the vbd stays
# Connected and, once the OSD runs again, serves byte-exact I/O.
# Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
osd=$(pgrep -f "ceph-osd -i 0 -f -c $CEPH_CONF" | head -1)
[ -n "$osd" ] || fail "the cluster's OSD is not running"
cleanup_fn kill -CONT "$osd"	# never leave the cluster stopped
start_sim_backend
new_disk 8M
new_guest; A=$DOM
add_disk $A "$params:rados_osd_op_timeout=3"
BK_STORE=file new_disk 4M
new_guest; B=$DOM
add_disk $B "$params"
fe=/local/domain/$A/device/vbd/51712
# one connection throughout: the vbd stays Connected across the outage
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=0 seg=p0 expect=OKAY
xs-expect fe stopped 1 timeout=60000
fill p1 seed:2
send op=write id=2 sector=8 seg=p1 expect=ERROR
xs-expect fe resumed 1 timeout=60000
fill p2 seed:3
send op=write id=3 sector=16 seg=p2 expect=OKAY
send op=read id=4 sector=0 seg=p3 expect=OKAY
check p3 seed:1
send op=read id=5 sector=16 seg=p3 expect=OKAY
check p3 seed:3
EOS
blkfront-test script --domid $A "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
# A's requests in the trace (B's ids would match trace_of too)
a_answered() { grep -qE "^t=[0-9]+ vbd=$A/51712 .* id=$1 .*status=" "$BACKEND_TRACE"; }
a_trace() { grep -E "^t=[0-9]+ vbd=$A/51712 .* id=$1( |$)" "$BACKEND_TRACE"; }
wait_for 30 a_answered 1 || { cat "$BK_TMP/s.out"; fail "the first write was not answered"; }
kill -STOP "$osd"
t0=$EPOCHREALTIME
xenstore-write $fe/stopped 1
wait_for 30 a_answered 2 ||
	{ cat "$BK_TMP/s.out"; fail "the write to the stopped cluster got no answer in 30 s"; }
secs=$(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { printf "%.1f", b - a }')
echo "WRITE with the OSD stopped: answered after $secs s: $(a_trace 2 | grep status=)"
a_trace 2 | grep -q "status=-1" || fail "request 2 was not answered ERROR"
awk -v s=$secs 'BEGIN { exit !(s >= 2.5) }' || fail "ERROR after $secs s, before the 3 s timeout"
io_works $B || fail "the other guest's vbd stopped working while the cluster was stopped"
xs_is "$(bk_be $A)/state" 4
kill -CONT "$osd"
xenstore-write $fe/resumed 1
wait $front || { cat "$BK_TMP/s.out"; fail "the guest's script failed after the cluster came back"; }
kill -0 "$(bk_pid)" || fail "blkbackd died"
stop_backend
exit 0
