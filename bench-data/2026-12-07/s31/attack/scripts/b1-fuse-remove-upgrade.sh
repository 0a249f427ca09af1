#!/usr/bin/env bash
# A on a FUSE file, guest I/O running; FUSE daemon stopped (I/O hangs); A's backend dir removed;
# B added on the same FUSE file; C on a normal file must be served; blkbackd-ctl list/upgrade;
# then FUSE continued.  STEP2=upgrade|term|int
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
fuse_file_start
new_guest; A=$DOM; beA=$(bk_be $A)
add_disk $A "$FUSE_DISK"
xs_wait $beA/state 2 30
blkfront-test verify --domid $A --count 100000000 --timeout 120000 > $BK_TMP/a.out 2>&1 &
VA=$!; cleanup_fn kill $VA
xs_wait $beA/state 4 30
sleep 1
fuse_file_stop
sleep 1
note "fuse stopped; A inflight? trace lines last 1s: $(tail -c 2000 $BACKEND_TRACE | tail -2)"
note "res: $(bk_res)"
xenstore-rm $beA
sleep 1
note "A dir removed"; timeout 15 blkbackd-ctl list 2>&1 | tee -a $OUT/notes; note "list rc=${PIPESTATUS[0]}"
new_guest; B=$DOM; beB=$(bk_be $B)
add_disk $B "$FUSE_DISK"
sleep 2
note "B state $(xenstore-read $beB/state 2>&1) error $(xenstore-read $beB/error 2>&1 | cut -c1-150)"
new_guest; C=$DOM; beC=$(bk_be $C)
truncate -s 4M $BK_TMP/c.img
add_disk $C $BK_TMP/c.img
xs_wait $beC/state 2 30
rc=0; timeout 60 blkfront-test verify --domid $C > $BK_TMP/c.out 2>&1 || rc=$?; note "C verify rc=$rc $(tail -1 $BK_TMP/c.out)"
timeout 15 blkbackd-ctl list 2>&1 | tee -a $OUT/notes
fuse_file_stopped || note "fuse ran again??"
pid=$(bk_pid)
case ${STEP2:-upgrade} in
upgrade) (timeout 100 blkbackd-ctl upgrade --timeout=90 > $BK_TMP/upg.out 2>&1; echo "rc=$?" >> $BK_TMP/upg.out) & UP=$!
  sleep 3; note "during upgrade: ctl list: $(timeout 15 blkbackd-ctl list 2>&1 | tr '\n' '|')"
  note "during upgrade: ctl status: $(timeout 15 blkbackd-ctl status 2>&1 | tr '\n' '|') rc=$?"
  note "during upgrade: threads: $(cat /proc/$pid/task/*/comm | tr '\n' ' ')"
  for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(cat $t/wchan)"; done | tee -a $OUT/notes
  cat /proc/$pid/task/*/stack 2>/dev/null | head -0
  ;;
term|int) kill -${STEP2^^} $pid; sleep 3 ;;
esac
note "blkbackd state: $(awk '{print $3}' /proc/$pid/stat 2>&1)"
tail -5 $BACKEND_LOG | sed -E 's/^[0-9T:.+-]+ //' | tee -a $OUT/notes
fuse_file_cont
note "fuse continued"
sleep 5
[ -n "${UP:-}" ] && { wait $UP || true; note "upgrade: $(cat $BK_TMP/upg.out | tr '\n' '|')"; }
note "blkbackd state: $(awk '{print $3}' /proc/$pid/stat 2>&1)"
note "B state $(xenstore-read $beB/state 2>&1) error $(xenstore-read $beB/error 2>&1 | cut -c1-150)"
timeout 15 blkbackd-ctl list 2>&1 | tee -a $OUT/notes
note "A verify alive: $(kill -0 $VA 2>/dev/null && echo yes || echo no)"; tail -3 $BK_TMP/a.out | tee -a $OUT/notes
if [ ${STEP2:-upgrade} = upgrade ] && [ "$(xenstore-read $beB/state 2>&1)" = 2 ]; then
  rc=0; timeout 60 blkfront-test verify --domid $B --size 1M > $BK_TMP/b.out 2>&1 || rc=$?; note "B verify rc=$rc $(tail -1 $BK_TMP/b.out)"
  note "res: $(bk_res)"
  stop_backend; note "stopped ok"
else
  wait_for 30 eval '! kill -0 $pid 2>/dev/null' && note "blkbackd exited" || note "blkbackd still running"
  rc=0; wait $pid 2>/dev/null || rc=$?; note "rc=$rc"; _backend_running=
fi
sed -E 's/^[0-9T:.+-]+ //' $BACKEND_LOG | grep -v '^xensim' | tee $OUT/log.short | tail -40
