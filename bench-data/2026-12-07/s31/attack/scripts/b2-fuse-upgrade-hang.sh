#!/usr/bin/env bash
# A Connected on a FUSE file (idle guest, disk open); FUSE daemon stopped; blkbackd-ctl upgrade.
# Is the daemon still serving others (new guest D), does ctl answer, what happens to the upgrade?
# REMOVE=1: also remove A's dir first (A drains, hung); IO=1: guest I/O in flight on A when stopped
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
fuse_file_start
new_guest; A=$DOM; beA=$(bk_be $A)
add_disk $A "$FUSE_DISK"
xs_wait $beA/state 2 30
if [ "${IO:-0}" = 1 ]; then
  blkfront-test verify --domid $A --count 100000000 --timeout 120000 > $BK_TMP/a.out 2>&1 &
else
  cat > $BK_TMP/a.s <<'EOS'
fill p0 seed:3
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe go 1 timeout=120000
send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=60000
check p1 seed:3
EOS
  blkfront-test script --domid $A --no-close $BK_TMP/a.s > $BK_TMP/a.out 2>&1 &
fi
VA=$!; cleanup_fn kill $VA
xs_wait $beA/state 4 30
sleep 1
fuse_file_stop
[ "${REMOVE:-0}" = 1 ] && { xenstore-rm $beA; sleep 1; note "A dir removed"; }
pid=$(bk_pid)
trap 'echo "SCRIPT GOT SIGTERM/INT" >> $OUT/notes; exit 1' INT TERM
if [ "${STRACE:-0}" = 1 ]; then strace -f -tt -p $pid -e trace=process,signal,close -o $OUT/strace.out & ST=$!; cleanup_fn kill $ST; sleep 1; fi
(timeout 100 blkbackd-ctl upgrade --timeout=90 > $BK_TMP/upg.out 2>&1; echo "rc=$?" >> $BK_TMP/upg.out) &
UP=$!
sleep 3
note "blkbackd threads wchan: $(for t in /proc/$pid/task/*; do echo -n "$(cat $t/comm):$(cat $t/wchan) "; done)"
note "blkbackd main thread wchan: $(cat /proc/$pid/wchan)"
new_guest; D=$DOM; beD=$(bk_be $D); truncate -s 4M $BK_TMP/d.img
add_disk $D $BK_TMP/d.img
t0=$(date +%s.%N)
if wait_for 15 _xs_eq $beD/state 2; then note "D reached InitWait after $(echo "$(date +%s.%N) - $t0" | bc) s"; else note "D NOT in InitWait after 15 s: state $(xenstore-read $beD/state)"; fi
note "ctl status: $(timeout 15 blkbackd-ctl status 2>&1 | tr '\n' '|')"
sleep 5
note "upgrade client so far: $(cat $BK_TMP/upg.out | tr '\n' '|')"
note "blkbackd threads wchan: $(for t in /proc/$pid/task/*; do echo -n "$(cat $t/comm):$(cat $t/wchan) "; done)"
fuse_file_cont; note "fuse continued"
sleep 5
wait $UP || true; note "upgrade client: $(cat $BK_TMP/upg.out | tr '\n' '|')"
note "D state $(xenstore-read $beD/state)"
note "ctl status: $(timeout 15 blkbackd-ctl status 2>&1 | tr '\n' '|')"
grep -i 'upgrad\|exec\|version' $BACKEND_LOG | tee -a $OUT/notes
if [ "${REMOVE:-0}" != 1 ]; then xenstore-write /local/domain/$A/device/vbd/51712/go 1; rc=0; timeout 60 tail --pid=$VA -f /dev/null; wait $VA || rc=$?; note "A guest rc=$rc $(tail -1 $BK_TMP/a.out)"; fi
rc=0; timeout 60 blkfront-test verify --domid $D > $BK_TMP/d.out 2>&1 || rc=$?; note "D verify rc=$rc $(tail -1 $BK_TMP/d.out)"
stop_backend; note "stopped ok"
sed -E 's/^[0-9T:.+-]+ //' $BACKEND_LOG > $OUT/log.short
