#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C09: a WRITE whose second segment has an invalid grant (0xffffffff, one
# granted to another domain), a READ into a read-only grant: exactly one
# ERROR response each with the request's own id and operation, nothing
# written, and the ring keeps working.  On each data path: grant copies,
# maps per request, persistent grants.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --feature-persistent=0
new_disk 4M
new_guest; other=$DOM
new_guest
add_disk $DOM "$params"
cat > "$BK_TMP/s" <<EOS
fill p0 seed:3
send op=write id=1 sector=0 seg=p0 seg=0xffffffff:0:7 expect=ERROR
grant alien domid=$other
send op=write id=2 sector=0 seg=p0 seg=alien expect=ERROR
grant ro1 ro
send op=read id=3 sector=0 seg=ro1 expect=ERROR
expect-none timeout=300
fill p1 seed:4
send op=write id=4 sector=0 seg=p1 expect=OKAY
send op=read id=5 sector=0 seg=p2 expect=OKAY
check p2 seed:4
EOS
run_script $DOM "$BK_TMP/s"
# the writes are refused before any host I/O; the read's data is only
# discarded after the host read (grant copy finds the grant read-only)
no_host_io 1
no_host_io 2
for id in 1 2 3; do
	[ "$(trace_of $id | grep -c status=)" = 1 ] || fail "request $id: not exactly one response"
	trace_of $id | grep -q "status=-1" || fail "request $id was not answered ERROR"
done
trace_of 1 | grep -q "^op=write id=1 " || fail "response 1 has the wrong operation"
trace_of 3 | grep -q "^op=read id=3 " || fail "response 3 has the wrong operation"
stop_backend

# zero-copy (every request mapped): the mapping is all-or-nothing, so
# even the read into a read-only grant fails before any host I/O.
# Persistent grants (the default) are mapped writable: the read into a
# read-only grant is refused by the map before any host I/O too; a
# WRITE whose pages cannot be mapped so is grant-copied instead (a
# read-only page is fine for a write, C22), and the bad grants fail
# that copy, before any host I/O as well.
for mode in "--feature-persistent=0 --map-threshold=512" --feature-persistent=1; do
	start_backend $mode
	: > "$BACKEND_TRACE"
	new_guest
	add_disk $DOM "$params"
	run_script $DOM "$BK_TMP/s"
	for id in 1 2 3; do
		no_host_io $id
		[ "$(trace_of $id | grep -c status=)" = 1 ] ||
			fail "$mode: request $id: not exactly one response"
		reason="cannot map"
		[ "$mode" = --feature-persistent=1 ] && [ $id != 3 ] && reason="grant copy from guest failed"
		trace_of $id | grep -q "status=-1 reason=$reason" ||
			fail "$mode: request $id was not refused ($reason): $(trace_of $id)"
	done
	stop_backend
done
exit 0
