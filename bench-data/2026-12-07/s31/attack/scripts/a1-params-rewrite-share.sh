#!/usr/bin/env bash
# A Connected on X; toolstack rewrites A's params to Y (or removes it); B added on X.
# blkbackd.8: "A file ... that a Connected vbd already serves is refused ... unless both mode=r"
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
truncate -s 8M $BK_TMP/x.img $BK_TMP/y.img
new_guest; A=$DOM
add_disk $A $BK_TMP/x.img
xs_wait $(bk_be $A)/state 2 30
blkfront-test verify --domid $A --size 4M --count 100000000 > $BK_TMP/a.out 2>&1 &
VA=$!; cleanup_fn kill $VA
xs_wait $(bk_be $A)/state 4 30
sleep 1
MODE=${MODE:-rewrite}
if [ $MODE = rewrite ]; then xenstore-write $(bk_be $A)/params $BK_TMP/y.img; else xenstore-rm $(bk_be $A)/params; fi
sleep 0.5
note "after params $MODE:"; lst
new_guest; B=$DOM
add_disk $B $BK_TMP/x.img
sleep 3
note "B state: $(xenstore-read $(bk_be $B)/state) error: $(xenstore-read $(bk_be $B)/error 2>&1)"
lst
verify_stop $VA $BK_TMP/a.out 1024 && note "A verify ok"
stop_backend
