#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C12: the guest writes, flushes (OKAY), writes again; blkbackd is killed
# with SIGKILL and the host "loses power" (the volatile cache model of
# --cache=volatile is dropped with the process): every write acknowledged
# before the flush is on the backing, the unflushed one is not.
# feature-flush-cache=1 is advertised if and only if the backing flushes.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --cache=volatile
guest_with_disk 4M
cat > "$BK_TMP/s" <<EOS
xs-expect be feature-flush-cache 1
fill p0 seed:1
fill p1 seed:2
send op=write id=1 sector=0 seg=p0 expect=OKAY
send op=write id=2 sector=8 seg=p1 expect=OKAY
send op=flush id=3 nr_segments=0 expect=OKAY
fill p2 seed:3
send op=write id=4 sector=16 seg=p2 expect=OKAY
dump p0 $BK_TMP/p0
dump p1 $BK_TMP/p1
EOS
run_script $DOM "$BK_TMP/s" --no-close
kill -KILL "$(cat "$BACKEND_PIDFILE")"
wait "$(cat "$BACKEND_PIDFILE")" 2>/dev/null || true
cmp <(cat "$BK_TMP/p0" "$BK_TMP/p1") <(backing_dd 0 16) ||
	fail "a write acknowledged before the flush is not on the backing"
cmp -n 4096 <(backing_dd 16 8) /dev/zero ||
	fail "the unflushed write reached the backing: the volatile cache model did nothing"

# a backing that cannot flush: flush and barrier are not advertised
start_backend
new_guest
add_disk $DOM memory:1M,no-flush --be-key flush-mode=both
cat > "$BK_TMP/n" <<'EOS'
xs-expect be feature-flush-cache 0
xs-expect be feature-barrier 0
EOS
run_script $DOM "$BK_TMP/n"
stop_backend
exit 0
