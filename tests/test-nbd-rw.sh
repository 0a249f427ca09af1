#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nbd store through the ring: guest -> blkbackd -> libnbd -> a real
# server (nbdkit on a unix socket), judged from outside blkbackd:
#  - byte-exact: direct requests of 1, 2 and 11 segments, a 16-segment
#    indirect one and a partial-page one, read back through the ring and
#    found in the file nbdkit serves, at the right offsets; a guest FLUSH
#    reaches the server as NBD_CMD_FLUSH (nbdkit's log filter), and a
#    FUA write as a write with fua=1;
#  - blkfront-test verify on two queues (multi-conn: a connection each);
#  - the server killed with writes in flight (nbdkit's delay filter holds
#    them): every one is answered BLKIF_RSP_ERROR, within seconds, the
#    daemon and another vbd go on; a FLUSH after the death, with a write
#    acknowledged before it, is ERROR (the server may have lost it), not
#    OKAY; the server back on its socket: a new vbd on it works (a fresh
#    connection), and so does the old one's reconnect for reads/writes;
#  - a server that stops answering (SIGSTOP): the requests fail after the
#    store's timeout= (2 s here), not never.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
start_sim_backend

img=$BK_TMP/disk.img
truncate -s 32M "$img"
nbdkit_start rw --filter=log file "$img" logfile="$BK_TMP/rw.nbdlog"
params="nbd:$NBD_URI"
new_guest
add_disk $DOM "$params"
{
	for n in 1 2 11; do
		segs= rsegs=
		for (( i=0; i<n; i++ )); do
			echo "fill p$i seed:$((n * 100 + i))"
			segs+=" seg=p$i" rsegs+=" seg=p$((20 + i))"
		done
		echo "send op=write sector=$((n * 1000))$segs expect=OKAY"
		echo "send op=read sector=$((n * 1000))$rsegs expect=OKAY"
		for (( i=0; i<n; i++ )); do
			echo "check p$((20 + i)) seed:$((n * 100 + i))"
			echo "dump p$i $BK_TMP/w$n.$i"
		done
	done
	segs= rsegs=
	for (( i=0; i<16; i++ )); do
		echo "fill p$((50 + i)) seed:$((5000 + i))"
		segs+=" seg=p$((50 + i))" rsegs+=" seg=p$((90 + i))"
		echo "dump p$((50 + i)) $BK_TMP/i$i"
	done
	echo "send op=indirect indirect_op=write id=5000 sector=24000$segs expect=OKAY"
	echo "send op=indirect indirect_op=read id=5001 sector=24000$rsegs expect=OKAY"
	for (( i=0; i<16; i++ )); do echo "check p$((90 + i)) seed:$((5000 + i))"; done
	# sectors 1..3 of p40 and sector 7 of p42
	echo "fill p40 seed:40"
	echo "fill p42 seed:42"
	echo "send op=write sector=30000 seg=p40:1:3 seg=p42:7:7 expect=OKAY"
	echo "dump p40 $BK_TMP/p40"
	echo "dump p42 $BK_TMP/p42"
	echo "send op=flush nr_segments=0 expect=OKAY"
} > "$BK_TMP/rw.script"
run_script $DOM "$BK_TMP/rw.script"
on_image() { dd if="$img" bs=512 skip="$1" count="$2" status=none; }
for n in 1 2 11; do
	for (( i=0; i<n; i++ )); do
		cmp "$BK_TMP/w$n.$i" <(on_image $(( n * 1000 + i * 8 )) 8) ||
			fail "$n-segment write: segment $i is not in the export byte for byte"
	done
done
for (( i=0; i<16; i++ )); do
	cmp "$BK_TMP/i$i" <(on_image $(( 24000 + i * 8 )) 8) ||
		fail "indirect write: segment $i is not in the export byte for byte"
done
cmp <(dd if="$BK_TMP/p40" bs=512 skip=1 count=3 status=none; dd if="$BK_TMP/p42" bs=512 skip=7 count=1 status=none) \
	<(on_image 30000 4) || fail "partial-page write is not in the export byte for byte"
cmp -n 512 <(on_image 30004 1) /dev/zero || fail "the partial write spilled past its end"
# the guest's flush is the server's: NBD_CMD_FLUSH, answered
grep -q " Flush id=[0-9]* \.\.\." "$BK_TMP/rw.nbdlog" && grep -q "\.\.\.Flush id=[0-9]* return=0" "$BK_TMP/rw.nbdlog" ||
	fail "the guest's flush never reached the server as NBD_CMD_FLUSH"
# the 11-segment write arrived as one NBD write of 44 KiB at sector 11000
grep -q "Write id=[0-9]* offset=0x$(printf %x $((11000 * 512))) count=0xb000 fua=0" "$BK_TMP/rw.nbdlog" ||
	fail "the 11-segment write did not reach the server as one 44 KiB write"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"

vfy() { # blkfront-test verify options...
	blkfront-test xl-add --domid $DOM --params "$params" >/dev/null || fail "xl-add $params"
	blkfront-test verify --domid $DOM --timeout 20000 "$@" >"$BK_TMP/out" 2>&1 ||
		{ cat "$BK_TMP/out"; fail "verify $* failed"; }
	grep "^verify: ok: " "$BK_TMP/out" || fail "no verify summary"
	blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
}
vfy --size 4M --offset 16M --iodepth 16 --flush-every 32
vfy --bs 64k --size 4M --offset 24M --iodepth 8 --queues 2 --max-indirect 16 --flush-every 8
vfy --check-only --bs 64k --size 4M --offset 24M
# two queues, two connections (nbdkit's memory and file plugins are multi-conn)
[ "$(grep -o "connection=[0-9]*" "$BK_TMP/rw.nbdlog" | sort -u | wc -l)" -ge 3 ] ||
	fail "the two-queue run did not open a connection per queue"

# ---- the server killed with writes in flight ----
# each write waits 3 s in the server: the kill finds them there
nbdkit_start dying --filter=log --filter=delay memory size=16M logfile="$BK_TMP/dying.nbdlog" delay-write=3
dying_pid=$NBDKIT_PID dying_uri=$NBD_URI
new_guest
dying=$DOM
add_disk $dying "nbd:$dying_uri,timeout=20"
{
	# a write acknowledged before the death, never flushed
	echo "fill p0 seed:3"
	echo "send op=write id=10 sector=8 seg=p0 expect=OKAY timeout=10000"
	for i in 1 2 3 4; do
		echo "fill p$i seed:$i"
		echo "send op=write id=$i sector=$((i * 64)) seg=p$i nopush"
	done
	echo "push"
	echo "wait-all status=ERROR timeout=15000"
	echo "echo killed-answered"
	# the server is back by now (the script below restarts it) and the
	# store reconnects: the death may have lost write 10, so the flush
	# must not say OKAY
	echo "sleep 2000"
	echo "send op=flush id=9 nr_segments=0 expect=ERROR timeout=15000"
} > "$BK_TMP/kill.script"
blkfront-test script --domid $dying --max-indirect 16 "$BK_TMP/kill.script" > "$BK_TMP/kill.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 15 eval '[ "$(grep -c " Write id=.* \.\.\.$" "$BK_TMP/dying.nbdlog")" -ge 5 ]' ||
	fail "the 4 writes never reached the server"
t0=$(date +%s)
kill -KILL $dying_pid
wait_for 10 grep -q killed-answered "$BK_TMP/kill.out" ||
	{ cat "$BK_TMP/kill.out"; fail "the writes in flight at the kill were not all answered ERROR within 10 s"; }
# the server back on the same socket
nbdkit_start dying --filter=log memory size=16M logfile="$BK_TMP/back.nbdlog"
wait $front || { cat "$BK_TMP/kill.out"; fail "the flush after the death was not ERROR"; }
# the store did reconnect (the flush was refused for the lost write, not
# for want of a server): the restarted server saw a connection
grep -q "connection=" "$BK_TMP/back.nbdlog" || fail "the vbd never reconnected to the restarted server"
# the daemon is fine, and so is another vbd (on the first server)
good_device_works "$params"
# a new vbd on the restarted server works
good_device_works "nbd:$NBD_URI"

# ---- a server that stops answering: the store's timeout ----
nbdkit_start stuck --filter=log memory size=16M logfile="$BK_TMP/stuck.nbdlog"
stuck_pid=$NBDKIT_PID
cleanup_fn kill -CONT $stuck_pid
new_guest
add_disk $DOM "nbd:$NBD_URI,timeout=2"
# one script, one connection: the vbd stays connected while the server
# is stopped (SIGSTOP once the first write is answered) and woken again
cat > "$BK_TMP/stuck.script" <<'EOS'
fill p0 seed:5
send op=write id=1 sector=16 seg=p0 expect=OKAY
sleep 1500
send op=write id=2 sector=24 seg=p0 expect=ERROR timeout=10000
send op=read id=3 sector=16 seg=p1 expect=ERROR timeout=10000
echo stuck-done
sleep 1500
send op=write id=4 sector=32 seg=p0 expect=OKAY timeout=10000
send op=read id=5 sector=32 seg=p2 expect=OKAY timeout=10000
check p2 seed:5
EOS
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/stuck.script" > "$BK_TMP/stuck.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "Write id=[0-9]* return=0" "$BK_TMP/stuck.nbdlog" || fail "the first write never reached the server"
kill -STOP $stuck_pid
t0=$(date +%s)
wait_for 15 grep -q "stuck-done" "$BK_TMP/stuck.out" || { cat "$BK_TMP/stuck.out"; fail "a stuck server's requests were not answered ERROR"; }
[ $(( $(date +%s) - t0 )) -ge 2 ] || fail "a stuck server's requests failed before the timeout"
# the server answers again: the next requests reconnect and work
kill -CONT $stuck_pid
wait $front || { cat "$BK_TMP/stuck.out"; fail "the vbd did not recover once the server answered again"; }
good_device_works "$params"
stop_backend
exit 0
