#!/usr/bin/env bash
# 15 cycles: vbd added on the same file, guest connects (attach --hold), the toolstack removes the
# backend dir under the Connected guest and writes it again at once (xl-add again); then fds/threads.
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
truncate -s 4M $BK_TMP/x.img
new_guest; A=$DOM; be=$(bk_be $A)
sleep 1; res0=$(bk_res); note "res0 $res0"
for i in $(seq 1 15); do
  new_guest; A=$DOM; be=$(bk_be $A)
  add_disk $A $BK_TMP/x.img
  xs_wait $be/state 2 30
  blkfront-test attach --domid $A --hold > $BK_TMP/h.out 2>&1 & H=$!
  xs_wait $be/state 4 30
  kill -STOP $H
  xenstore-rm $be
  xenstore-rm /local/domain/$A/device/vbd/51712 || true
  kill -KILL $H; kill -CONT $H 2>/dev/null || true; wait $H 2>/dev/null || true
  wait_for 10 bk_forgot $A || note "cycle $i: still holds $(bk_holds $A)"
  destroy_domain $A
done
sleep 2
note "res after: $(bk_res) (baseline $res0) holds $(bk_holds $A)"
lst
rc=0; good_device_works $BK_TMP/x.img || rc=$?; note "fresh guest on same file works rc=$rc"
stop_backend; note "stopped ok"
