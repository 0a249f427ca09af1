#!/usr/bin/env bash
# control: blkbackd-ctl upgrade with one idle guest on a plain file (no FUSE) works
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
new_guest; A=$DOM; truncate -s 4M $BK_TMP/a.img; add_disk $A $BK_TMP/a.img
xs_wait $(bk_be $A)/state 2 30
blkfront-test attach --domid $A --hold > $BK_TMP/a.out 2>&1 & H=$!; cleanup_fn kill $H
xs_wait $(bk_be $A)/state 4 30
t0=$(date +%s.%N); rc=0; timeout 100 blkbackd-ctl upgrade --timeout=90 > $BK_TMP/upg.out 2>&1 || rc=$?
note "upgrade rc=$rc in $(echo "$(date +%s.%N)-$t0"|bc)s: $(cat $BK_TMP/upg.out)"
note "status: $(blkbackd-ctl status | tr '\n' '|')"
kill $H; sleep 1
stop_backend; note stopped ok
