#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Moving a disk between hosts: two blkbackd daemons, each with its own
# xensim ("host A", "host B"), serve one RBD image one after the other.
# A guest on A writes (blkfront-test verify, with flushes) and detaches;
# a guest on B attaches the same image and reads back every acknowledged
# write byte-exact: exactly the blocks A's guest log says were written
# hold verify's blocks, the rest are zero (an image that lost them all
# would pass a check that only looks for bad blocks).  The image's exclusive lock keeps two writers apart:
# while A's vbd is connected, a writable attach on B is refused before
# InitWait with an error node naming the lock's holder, and the same
# attach succeeds once A has closed.  A read-only attach (mode=r) on B
# is not refused.  Then 20 handovers back and forth, each timed (from
# the source's xl-remove to the destination's first read checked) and
# printed, with their median and max.  Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/ceph/lib-hosts.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
new_disk 16M

host_new A
A_LOG=$BACKEND_LOG
new_guest
A_DOM=$DOM
add_disk $A_DOM "$params"
host_new B
B_LOG=$BACKEND_LOG

# A writes, with a flush every 16 writes; its frontend closes at the end
host A
blkfront-test verify --domid $A_DOM --size 8M --bs 16k --iodepth 8 --flush-every 16 \
	--timeout 20000 --log "$BK_TMP/a.glog" >"$BK_TMP/a.out" 2>&1 || { cat "$BK_TMP/a.out"; fail "verify on host A"; }
grep "^verify: ok: " "$BK_TMP/a.out" || fail "no verify summary on host A"
# the blocks A's guest was told were written (its guest log's W records,
# one 16 KiB block each): B must find every one of them
written=$(awk '$1 == "W" { s[$3] = 1 } END { print length(s) }' "$BK_TMP/a.glog")
[ "$written" -gt 0 ] || fail "host A's guest log has no acknowledged write"
# ... and connects again, holding the image
blkfront-test attach --domid $A_DOM --hold >"$BK_TMP/a.attach" 2>&1 &
a_front=$!
cleanup_fn kill $a_front
xs_wait "$(bk_be $A_DOM)/state" 4 20

# B: a second writer is refused before InitWait, the holder named
host B
new_guest
B_DOM=$DOM
add_disk $B_DOM "$params"
be=$(bk_be $B_DOM)
xs_wait "$be/state" 5 30
err=$(xenstore-read "$be/error")
echo "host B, second writer: $err"
case $err in
"params: cannot open rbd store \"$img:conf=$CEPH_CONF\": image $img is locked by another writer (lock owner \""*) ;;
*) fail "error node of the refused writer: \"$err\"" ;;
esac
grep -q "locked by another writer" "$B_LOG" || fail "host B's blkbackd did not log the refusal"
# a reader is not refused
blkfront-test xl-add --domid $B_DOM --vdev xvdb --params "$params" --mode r >/dev/null ||
	fail "xl-add mode=r on host B"
cat > "$BK_TMP/r" <<'EOS'
xs-expect be info 4
send op=read id=1 sector=0 seg=p0 expect=OKAY
EOS
run_script $B_DOM "$BK_TMP/r" --vdev xvdb
blkfront-test xl-remove --domid $B_DOM --vdev xvdb >/dev/null || fail "xl-remove xvdb on B"
blkfront-test xl-remove --domid $B_DOM >/dev/null || fail "xl-remove the refused vbd on B"

# A lets go: its frontend closes, the toolstack removes the vbd
host A
kill -TERM $a_front
wait $a_front 2>/dev/null || true
blkfront-test xl-remove --domid $A_DOM >/dev/null || fail "xl-remove on A"
wait_for 20 grep -q "vbd $A_DOM/51712: removed" "$A_LOG" || fail "host A did not remove its vbd"

# B takes over: the same attach now connects, and every block A wrote
# (and had acknowledged) reads back byte-exact
host B
add_disk $B_DOM "$params"
blkfront-test verify --domid $B_DOM --check-only --size 8M --bs 16k --timeout 20000 \
	>"$BK_TMP/b.out" 2>&1 || { cat "$BK_TMP/b.out"; fail "check-only on host B"; }
grep "^verify: ok: " "$BK_TMP/b.out" || fail "no verify summary on host B"
grep -q "^verify: ok: check-only: $written valid blocks, $((512 - written)) zero blocks" "$BK_TMP/b.out" ||
	fail "host B did not find the $written blocks host A wrote (of 512): $(grep '^verify: ok' "$BK_TMP/b.out")"
grep -q "vbd $B_DOM/51712: .* -> Connected (rbd" "$B_LOG" ||
	grep -q "vbd $B_DOM/51712: .*Connected" "$B_LOG" || fail "B never connected"
# and now A is the one refused while B's guest is connected (the lock
# is held from the connection to the disconnection: check-only's
# frontend has closed, so B connects again and holds)
blkfront-test attach --domid $B_DOM --hold >"$BK_TMP/b.attach" 2>&1 &
b_front=$!
cleanup_fn kill $b_front
xs_wait "$(bk_be $B_DOM)/state" 4 20
host A
new_guest
add_disk $DOM "$params"
xs_wait "$(bk_be $DOM)/state" 5 30
xenstore-read "$(bk_be $DOM)/error" | grep -q "is locked by another writer" ||
	fail "host A was not refused while B holds the image"
host B
kill -TERM $b_front
wait $b_front 2>/dev/null || true
xs_wait "$(bk_be $B_DOM)/state" 6 20
host A
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove the refused vbd on A"
A_DOM=$DOM

# The handover, 20 times: the guest on the host holding the image writes
# one page (seed = the round) and flushes; then the switch: the toolstack
# removes the vbd there (blkbackd closes the image, which releases the
# lock), adds it on the other host, and the guest there connects and
# reads the page back byte-exact.  Timed from the xl-remove to that
# read's check: "release" is the part until the source's blkbackd had
# closed the image.  Printed per round, then median and max.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
removed() { # HOST DOM N: that host's blkbackd has logged N removals of DOM's xvda
	[ "$(grep -c "vbd $2/51712: removed" "$([ "$1" = A ] && echo "$A_LOG" || echo "$B_LOG")")" -ge "$3" ]
}
rounds=${RBD_MOVE_ROUNDS:-20}
from=B to=A
declare -A dom=([A]=$A_DOM [B]=$B_DOM) nrm=([A]=$(grep -c "vbd $A_DOM/51712: removed" "$A_LOG") [B]=$(grep -c "vbd $B_DOM/51712: removed" "$B_LOG"))
tot=() rel=()
for (( r=1; r<=rounds; r++ )); do
	host $from
	cat > "$BK_TMP/mw" <<EOS
fill p0 seed:$((7000 + r))
send op=write id=1 sector=$((8 * r)) seg=p0 expect=OKAY
send op=flush id=2 nr_segments=0 expect=OKAY
EOS
	run_script ${dom[$from]} "$BK_TMP/mw"
	t0=$(now_ms)
	blkfront-test xl-remove --domid ${dom[$from]} >/dev/null || fail "round $r: xl-remove on $from"
	nrm[$from]=$(( ${nrm[$from]} + 1 ))
	wait_for 20 removed $from ${dom[$from]} ${nrm[$from]} ||
		fail "round $r: host $from did not remove its vbd"
	t1=$(now_ms)
	host $to
	add_disk ${dom[$to]} "$params"
	cat > "$BK_TMP/mr" <<EOS
send op=read id=1 sector=$((8 * r)) seg=p1 expect=OKAY
check p1 seed:$((7000 + r))
EOS
	run_script ${dom[$to]} "$BK_TMP/mr"
	t2=$(now_ms)
	echo "handover $r: $from -> $to: $((t2 - t0)) ms (release $((t1 - t0)) ms)"
	tot+=($((t2 - t0))) rel+=($((t1 - t0)))
	x=$from from=$to to=$x
done
python3 - "${tot[*]}" "${rel[*]}" <<'PY'
import statistics, sys
tot = [int(x) for x in sys.argv[1].split()]
rel = [int(x) for x in sys.argv[2].split()]
print("handover: %d rounds: switch median %d ms, max %d ms; release median %d ms, max %d ms"
      % (len(tot), statistics.median(tot), max(tot), statistics.median(rel), max(rel)))
PY
# every round's page is still there, read from the last holder
host $from
{
	for (( r=1; r<=rounds; r++ )); do
		echo "send op=read id=$r sector=$((8 * r)) seg=p1 expect=OKAY"
		echo "check p1 seed:$((7000 + r))"
	done
} > "$BK_TMP/mall"
run_script ${dom[$from]} "$BK_TMP/mall"
blkfront-test xl-remove --domid ${dom[$from]} >/dev/null || fail "xl-remove on $from"
bad=$(grep -h "error" "$A_LOG" "$B_LOG" | grep -v "locked by another writer" || true)
[ -z "$bad" ] || fail "errors in the blkbackd logs: $bad"
host B
stop_backend
host A
stop_backend
exit 0
