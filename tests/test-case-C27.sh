#!/usr/bin/env bash
# C27: a reconnect with I/O in flight and reused ids.  On a slow store
# (1 s a request) the guest sends WRITE id=7 (pattern A) to sector 0,
# and 0.3 s later, while blkbackd has it in flight, goes 5, 6, 1 and
# sets up a new ring (a request still on the ring when the frontend is
# Closed is never taken, as in Linux blkback, whose ring thread stops
# there: sent and closed at once, it raced the queue thread); then WRITE id=7
# (pattern B) to sector 0 and READ id=8 on the new ring.
#  - blkbackd is not Connected on the new ring before the old write
#    completed: its response is on the old ring (ring 0), the drain
#    ("disconnected") comes before the second Connected;
#  - exactly one id=7 response on the new ring (any other response
#    fails the script);
#  - id=8 reads B, never A;
#  - nothing is written to the old ring after it was unmapped: ring-new
#    ends access to it once blkbackd unmapped it.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
add_disk $DOM memory:4M,delay-ms=1000
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:71
send op=write id=7 sector=0 seg=p0
expect-none timeout=300
xs-write fe state 5
xs-write fe state 6
xs-write fe state 1
ring-new wait=10000
wait id=7 ring=0 status=OKAY timeout=0
xs-expect be state 2 timeout=5000
xs-write fe state 3
xs-expect be state 4 timeout=5000
fill p1 seed:72
send op=write id=7 sector=0 seg=p1 expect=OKAY timeout=5000
send op=read id=8 sector=0 seg=p2 expect=OKAY timeout=5000
check p2 seed:72
expect-none timeout=300
close
EOS
run_script $DOM "$BK_TMP/s"
awk -v v="vbd $DOM/51712: " '
	index($0, v) && /-> Connected \(/ { c++; if (c == 2 && !d) bad = 1 }
	index($0, v "disconnected") { if (c == 1) d = 1 }
	END { exit bad || c != 2 || !d }' "$BACKEND_LOG" ||
	fail "the new ring was connected before the old one had drained"
[ "$(grep -c "vbd=$DOM/51712 ring=0 op=write id=7 .*status=0" "$BACKEND_TRACE")" = 2 ] ||
	fail "not exactly two id=7 writes answered OKAY (one per connection)"
stop_backend
exit 0
