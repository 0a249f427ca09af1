#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 100 connect/disconnect cycles of one vbd (frontend Initialising ->
# Connected -> Closed, backend InitWait -> Connected -> Closed each time)
# return blkbackd's file descriptors exactly and its memory (RSS) to the
# baseline: no ring mapping, event channel, aio context, eventfd or
# buffer leaks.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
[ "${BLK_VALGRIND:-}" = 1 ] && { echo "$0: skipped: too slow under valgrind"; exit 77; }
# ASan keeps freed memory in quarantine; RSS is only meaningful without it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0
start_xensim
start_backend
pid=$(cat "$BACKEND_PIDFILE")
guest_with_disk 16M
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write sector=0 seg=p0 seg=p1 seg=p2 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
send op=read sector=0 seg=p3 expect=OKAY
check p3 seed:1
EOS
fds() { ls /proc/$pid/fd | wc -l; }
rss() { awk '/^VmRSS/ { print $2 }' /proc/$pid/status; }
cycle() {
	blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" >/dev/null 2>&1 ||
		fail "cycle $1: the script failed"
	xs_wait "$(bk_be $DOM)/state" 6
}
for i in $(seq 1 10); do cycle $i; done
fd0=$(fds); rss0=$(rss)
for i in $(seq 11 100); do cycle $i; done
fd1=$(fds); rss1=$(rss)
echo "after 10 cycles: $fd0 fds, RSS $rss0 KiB; after 100: $fd1 fds, RSS $rss1 KiB"
[ "$fd1" = "$fd0" ] || { ls -l /proc/$pid/fd; fail "file descriptors leak: $fd0 -> $fd1"; }
[ $(( rss1 - rss0 )) -lt 4096 ] || fail "memory grows: RSS $rss0 -> $rss1 KiB over 90 cycles"
# each cycle wrote once, through a connection of its own (the log's
# connect lines are rate-limited; the counters cover every connection)
blkbackd-ctl stats --json "$DOM/51712" > "$BK_TMP/stats.json" || fail "stats --json"
python3 - "$BK_TMP/stats.json" <<'PY' || { cat "$BK_TMP/stats.json"; fail "not 100 cycles' writes"; }
import json, sys
v = json.load(open(sys.argv[1]))["vbds"][0]
assert v["wr_req"] == 100 and v["flush_req"] == 100 and v["rd_req"] == 100, v
PY
stop_backend
exit 0
