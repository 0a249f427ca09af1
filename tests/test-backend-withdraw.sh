#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The backing refuses an operation it was thought to support (EOPNOTSUPP
# from the host): the guest gets EOPNOTSUPP and the feature node is
# withdrawn (set to 0), as Linux blkback does; later requests of that kind
# are refused without host I/O.  And --unsafe-ignore-flush: loud warning,
# flushes acknowledged without any host flush.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
add_disk $DOM memory:4M,refuse-flush,refuse-discard --be-key flush-mode=both
cat > "$BK_TMP/s" <<'EOS'
xs-expect be feature-flush-cache 1
xs-expect be feature-barrier 1
xs-expect be feature-discard 1
send op=flush id=1 nr_segments=0 expect=EOPNOTSUPP
xs-expect be feature-flush-cache 0 timeout=5000
send op=flush id=2 nr_segments=0 expect=EOPNOTSUPP
send op=barrier id=3 nr_segments=0 expect=EOPNOTSUPP
xs-expect be feature-barrier 0 timeout=5000
send op=discard id=4 sector=0 nr_sectors=8 expect=EOPNOTSUPP
xs-expect be feature-discard 0 timeout=5000
send op=discard id=5 sector=0 nr_sectors=8 expect=EOPNOTSUPP
send op=write id=6 sector=0 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
trace_of 1 | grep -q "host=mem-flush result=-95" || fail "the first flush did not reach the host"
no_host_io 2
no_host_io 5
grep -q "feature-flush-cache=0" "$BACKEND_LOG" || fail "withdrawal not logged"
stop_backend

start_backend --unsafe-ignore-flush
grep -q "WARNING: --unsafe-ignore-flush" "$BACKEND_LOG" || fail "no warning for --unsafe-ignore-flush"
new_guest
add_disk $DOM memory:4M,no-flush --be-key flush-mode=both
cat > "$BK_TMP/u" <<'EOS'
xs-expect be feature-flush-cache 1
send op=flush id=11 nr_segments=0 expect=OKAY
send op=barrier id=12 sector=0 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/u"
trace_expect 11 "id=11 host=none(unsafe-ignore-flush)" \
	"op=flush id=11 sector=0 nr=0 segs=0 fua=0 -> host=none(unsafe-ignore-flush) status=0"
trace_of 12 | grep -q "mem-flush" && fail "a flush reached the host under --unsafe-ignore-flush"
stop_backend
exit 0
