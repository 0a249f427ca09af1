#!/usr/bin/env bash
# Like tests/test-fix-state-node-removed.sh, but the toolstack does $ACT (not only rm state)
# while the guest (script, --no-close) waits between a write and its read-back.
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
guest_with_disk 4M
A=$DOM; be=$(bk_be $DOM); fe=/local/domain/$A/device/vbd/51712
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:7
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe go 1 timeout=60000
send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=10000
check p1 seed:7
send op=write id=3 sector=64 seg=p1 expect=OKAY timeout=10000
EOS
blkfront-test script --domid $DOM --no-close "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "vbd=$DOM/51712 .* op=write id=1 .*status=0" "$BACKEND_TRACE" || fail "first write"
note "res before: $(bk_res) holds $(bk_holds $A)"
note "ACT: $ACT"; eval "$ACT"
bk_sync
sleep 1
note "be state $(xenstore-read $be/state 2>&1) fe state $(xenstore-read $fe/state 2>&1) error $(xenstore-read $be/error 2>&1|cut -c1-150)"
lst
note "res: $(bk_res) holds $(bk_holds $A)"
xenstore-write "$fe/go" 1
if timeout 30 tail --pid=$front -f /dev/null; then wait $front; note "guest script rc=$?"; else note "guest script HUNG"; fi
tail -5 $BK_TMP/s.out | tee -a $OUT/notes
lst
note "res: $(bk_res) holds $(bk_holds $A)"
xenstore-rm "$be"; sleep 1
lst; note "after rm dir res: $(bk_res) holds $(bk_holds $A)"
stop_backend; note "stopped ok"
