#!/usr/bin/env bash
# A permission change on a vbd's backend directory (xenstore-chmod, as
# the README's walk-through does, with and without -r) is not a removal:
# the connected guest keeps its ring, the vbd is neither re-probed nor
# forgotten (no "removed", no InitWait in the log, the counters go on),
# and its I/O before and after reads back byte-exact.  A directory
# removed and made again is still a new vbd (test-backend-readd).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-write fe at chmod
xs-expect fe go chmod timeout=30000
fill p1 seed:2
send op=write id=2 sector=16 seg=p1 expect=OKAY timeout=5000
send op=read id=3 sector=8 seg=p2 expect=OKAY timeout=5000
check p2 seed:1
send op=read id=4 sector=16 seg=p3 expect=OKAY timeout=5000
check p3 seed:2
EOS
blkfront-test script --domid $DOM --max-indirect 16 --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 _xs_eq "$fe/at" chmod || { cat "$BK_TMP/s.out"; fail "the first write did not complete"; }
n0=$(wc -l < "$BACKEND_LOG")
xenstore-chmod "$be" n0 r$DOM
xenstore-chmod -r "$be" n0 r$DOM
sleep 0.5	# whatever blkbackd does about it, it has done it by now
xenstore-write "$fe/go" chmod
wait $front || { cat "$BK_TMP/s.out"; fail "the guest's I/O did not go on after the chmod"; }
xs_is "$be/state" 4
xs_absent "$be/error"
tail -n +$((n0 + 1)) "$BACKEND_LOG" > "$BK_TMP/after"
! grep -E "vbd $DOM/51712: (removed|disconnect|.*-> InitWait|.*-> Connected)" "$BK_TMP/after" ||
	fail "a chmod of the backend directory re-probed or removed the vbd"
blkbackd-ctl --transport=sim stats "$DOM/51712" > "$BK_TMP/stats" || fail "blkbackd-ctl stats"
grep -Eq "^$DOM/51712 +2 +2 " "$BK_TMP/stats" ||
	{ cat "$BK_TMP/stats"; fail "the counters did not go on across the chmod (2 reads, 2 writes)"; }
stop_backend
exit 0
