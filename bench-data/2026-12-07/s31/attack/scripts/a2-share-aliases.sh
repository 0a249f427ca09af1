#!/usr/bin/env bash
# A Connected rw on X; B added on aliases of X (symlink, hardlink, //, file:, phy:, loop device)
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
truncate -s 8M $BK_TMP/x.img
ln -s $BK_TMP/x.img $BK_TMP/sym.img; ln $BK_TMP/x.img $BK_TMP/hard.img
new_guest; A=$DOM
add_disk $A $BK_TMP/x.img
xs_wait $(bk_be $A)/state 2 30
blkfront-test verify --domid $A --size 4M --count 100000000 > $BK_TMP/a.out 2>&1 &
VA=$!; cleanup_fn kill $VA
xs_wait $(bk_be $A)/state 4 30
[ "${MODE:-}" = rm ] && { xenstore-rm $(bk_be $A)/params; note "A params removed"; }
for p in $BK_TMP/sym.img $BK_TMP/hard.img $BK_TMP//x.img file:$BK_TMP/x.img phy:$BK_TMP/./x.img; do
  new_guest; B=$DOM
  add_disk $B "$p"
  wait_for 10 eval '[ "$(xenstore-read $(bk_be $B)/state)" != 1 ]' || true
  sleep 0.5
  note "B=$p state: $(xenstore-read $(bk_be $B)/state) error: $(xenstore-read $(bk_be $B)/error 2>&1 | cut -c1-80)"
done
lst
verify_stop $VA $BK_TMP/a.out 1024 && note "A verify ok"
stop_backend
