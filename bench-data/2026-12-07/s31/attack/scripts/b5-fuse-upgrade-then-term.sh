#!/usr/bin/env bash
# idle guest A on a FUSE file, FUSE stopped, blkbackd-ctl upgrade (hangs), then SIGTERM 12 s later
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
fuse_file_start
new_guest; A=$DOM; beA=$(bk_be $A)
add_disk $A "$FUSE_DISK"
xs_wait $beA/state 2 30
blkfront-test attach --domid $A --hold > $BK_TMP/a.out 2>&1 & H=$!; cleanup_fn kill $H
xs_wait $beA/state 4 30
fuse_file_stop
pid=$(bk_pid)
( rc=0; timeout 100 blkbackd-ctl upgrade --timeout=90 > $BK_TMP/upg.out 2>&1 || rc=$?; echo "exit=$rc" >> $BK_TMP/upg.out ) &
UP=$!
sleep 12
note "upgrade client after 12 s: $(tr '\n' '|' < $BK_TMP/upg.out)"
kill -TERM $pid; t0=$(date +%s)
sleep 5
note "5 s after SIGTERM: alive $(kill -0 $pid 2>/dev/null && echo yes || echo no); log tail: $(tail -1 $BACKEND_LOG | cut -c1-150)"
note "main thread wchan: $(cat /proc/$pid/wchan 2>&1)"
fuse_file_cont; note "fuse continued"
wait_for 30 eval '! kill -0 $pid 2>/dev/null' && note "exited $(( $(date +%s) - t0 )) s after SIGTERM" || note "still running 30 s after cont"
rc=0; wait $pid 2>/dev/null || rc=$?; note "blkbackd rc=$rc"; _backend_running=
wait $UP || true
sed -E 's/^[0-9T:.+-]+ //' $BACKEND_LOG | grep -v '^xensim' | tail -6 | tee -a $OUT/notes
