#!/usr/bin/env bash
# A Connected, verify running; toolstack removes the whole backend dir and writes it again
# (same keys, state=1) at once (DELAY s later).  Then check A's verify, list, fds/threads.
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
truncate -s 8M $BK_TMP/x.img
new_guest; A=$DOM; be=$(bk_be $A)
add_disk $A $BK_TMP/x.img
xs_wait $be/state 2 30
xenstore-ls -f $be > $BK_TMP/keys0.out
blkfront-test verify --domid $A --size 4M --count 100000000 > $BK_TMP/a.out 2>&1 &
VA=$!; cleanup_fn kill $VA
xs_wait $be/state 4 30
sleep 1
res0=$(bk_res); note "res before: $res0"
args=()
while read -r k eq v; do
  k=${k#$be/}
  case $k in state|max-ring-page-order|multi-queue-max-queues|feature-max-indirect-segments) continue;; esac
  v=${v#\"}; v=${v%\"}
  args+=("$be/$k" "$v")
done < $BK_TMP/keys0.out
note "rewrite keys: ${args[*]}"
xenstore-rm $be
sleep ${DELAY:-0}
xenstore-write "${args[@]}" $be/state 1
xenstore-chmod -r $be n0 r$A
for i in 1 2 3 4 5 6; do sleep 1; note "t=$i be state $(xenstore-read $be/state 2>&1) fe state $(xenstore-read /local/domain/$A/device/vbd/51712/state) error $(xenstore-read $be/error 2>&1|cut -c1-100)"; done
lst
note "res after: $(bk_res)"
note "holds: $(bk_holds $A)"
tail -3 $BK_TMP/a.out | tee -a $OUT/notes
if kill -0 $VA 2>/dev/null; then
  kill -INT $VA; timeout 60 tail --pid=$VA -f /dev/null; wait $VA; note "verify rc=$?"; tail -5 $BK_TMP/a.out | tee -a $OUT/notes
else wait $VA; note "verify ended early rc=$?"; fi
lst
note "res end: $(bk_res)"
stop_backend
