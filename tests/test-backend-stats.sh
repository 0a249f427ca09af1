#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGUSR1 logs exact per-vbd counters; --stats=1 logs them every second;
# both list connected vbds only, and exit logs every vbd's final counters.
# A stray SIGUSR2 is ignored, logged.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --stats=1
new_guest
add_disk $DOM memory:4M --be-key flush-mode=both
cat > "$BK_TMP/s" <<'EOS'
send op=write sector=0 seg=p0 seg=p1 expect=OKAY
send op=write sector=16 seg=p0 expect=OKAY
send op=write sector=24 seg=p0 expect=OKAY
send op=read sector=0 seg=p2 expect=OKAY
send op=read sector=8 seg=p2 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
send op=barrier nr_segments=0 expect=OKAY
send op=discard sector=0 nr_sectors=8 expect=OKAY
send op=read sector=99999999 seg=p2 expect=ERROR
send op=7 sector=0 seg=p2 expect=EOPNOTSUPP
EOS
run_script $DOM "$BK_TMP/s" --no-close
# a second guest that writes once and closes: Closed, then left out
live=$DOM
new_guest
add_disk $DOM memory:4M
echo "send op=write sector=0 seg=p0 expect=OKAY" > "$BK_TMP/s2"
run_script $DOM "$BK_TMP/s2"
xs_wait "$(bk_be $DOM)/state" 6
closed=$DOM DOM=$live
n0=$(grep -c "stats vbd=$closed/51712 " "$BACKEND_LOG" || true)
kill -USR1 "$(cat "$BACKEND_PIDFILE")"
want="stats vbd=$DOM/51712 rd_req=2 wr_req=3 flush_req=1 barrier_req=1 discard_req=1 rd_sect=16 wr_sect=32 discard_sect=8 oo_req=0 errors=1 eopnotsupp=1"
wait_for 5 grep -q "$want" "$BACKEND_LOG" || { grep stats "$BACKEND_LOG"; fail "no exact stats line after SIGUSR1"; }
# --stats=1: the periodic line appears again within 3 s
n=$(grep -c "$want" "$BACKEND_LOG")
more_lines() { [ "$(grep -c "$want" "$BACKEND_LOG")" -gt "$n" ]; }
wait_for 3 more_lines || fail "--stats=1 did not log periodically"
n1=$(grep -c "stats vbd=$closed/51712 " "$BACKEND_LOG" || true)
[ "$n1" = "$n0" ] || { grep stats "$BACKEND_LOG"; fail "the closed vbd $closed/51712 is still listed"; }
# a stray SIGUSR2 (blkcrash's power cut, without its options) is only
# logged: the daemon goes on serving
kill -USR2 "$(cat "$BACKEND_PIDFILE")"
wait_for 5 grep -q "SIGUSR2 ignored: it simulates a power cut only with --cache=volatile or --record" "$BACKEND_LOG" ||
	fail "SIGUSR2 without --cache=volatile/--record was not ignored with a log line"
kill -0 "$(cat "$BACKEND_PIDFILE")" || fail "blkbackd stopped on a stray SIGUSR2"
xs_is "$(bk_be $DOM)/state" 4
stop_backend
log_lines | grep -qx "blkbackd: stats vbd=$closed/51712 rd_req=0 wr_req=1 flush_req=0 barrier_req=0 discard_req=0 rd_sect=0 wr_sect=8 discard_sect=0 oo_req=0 errors=0 eopnotsupp=0 pgrants=0 pgrant_maps=1" ||
	{ grep stats "$BACKEND_LOG"; fail "no final line for the closed vbd at exit"; }
exit 0
