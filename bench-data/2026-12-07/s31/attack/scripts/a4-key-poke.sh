#!/usr/bin/env bash
# A Connected, verify running; toolstack does ACTION (env ACT, a bash snippet using $be $fe $A)
# Then: states, list, verify result (byte-exact read back), fds/threads.
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
truncate -s 8M $BK_TMP/x.img
new_guest; A=$DOM; be=$(bk_be $A); fe=/local/domain/$A/device/vbd/51712
add_disk $A $BK_TMP/x.img
xs_wait $be/state 2 30
blkfront-test verify --domid $A --size 4M --count 100000000 --timeout 10000 > $BK_TMP/a.out 2>&1 &
VA=$!; cleanup_fn kill $VA
xs_wait $be/state 4 30
sleep 1
note "res before: $(bk_res)"
note "ACT: $ACT"
eval "$ACT"
for i in 1 2 3; do sleep 1; note "t=$i be state $(xenstore-read $be/state 2>&1) fe state $(xenstore-read $fe/state 2>&1) error $(xenstore-read $be/error 2>&1|cut -c1-120)"; done
lst
a=$(grep -c "vbd=$A/51712 .* op=" $BACKEND_TRACE); sleep 1; b=$(grep -c "vbd=$A/51712 .* op=" $BACKEND_TRACE)
note "responses in 1s: $((b-a)); verify alive: $(kill -0 $VA 2>/dev/null && echo yes || echo no)"
note "res after: $(bk_res)  holds: $(bk_holds $A)"
if kill -0 $VA 2>/dev/null; then
  kill -INT $VA; timeout 60 tail --pid=$VA -f /dev/null || note "verify did not stop in 60s"; wait $VA; note "verify rc=$?"
else wait $VA; note "verify ended early rc=$?"; fi
tail -4 $BK_TMP/a.out | tee -a $OUT/notes
sleep 1
lst
note "res end: $(bk_res) holds: $(bk_holds $A)"
[ -n "${ACT2:-}" ] && { eval "$ACT2"; sleep 2; lst; note "res end2: $(bk_res) holds: $(bk_holds $A)"; }
stop_backend
note "rc ok"
