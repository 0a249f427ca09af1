#!/bin/bash
# Variant of 02: the backing's filesystem was fine at probe (InitWait) and hangs before the
# guest connects. The guest's connect blocks blkbackd's control thread: another guest's new
# vbd is not probed and blkbackd-ctl gets no answer until the filesystem answers again.
source /work/s30/attack/lib.sh
setup
D1=$(newdom g1); D2=$(newdom g2); D3=$(newdom g3)
truncate -s 16M $W/a.img $W/c.img
addvbd $D1 $W/a.img; waitkey $B/state 2
mkdir $W/mnt
$BFT export --domid $D1 $W/mnt > $W/exp.log 2>&1 & EXP=$!
until [ -e $W/mnt/disk ]; do sleep 0.1; done
addvbd $D2 $W/mnt/disk; B2=$B; waitkey $B2/state 2; echo "vbd 2 (on FUSE file) state=$(xenstore-read $B2/state)"
kill -STOP $EXP                                    # the filesystem hangs now
$BFT attach --domid $D2 --timeout 4000 >/dev/null 2>&1 & A2=$!   # guest 2 connects
sleep 2
addvbd $D3 $W/c.img; B3=$B; sleep 2
echo "vbd 3 (plain file, added 2 s after) state=$(xenstore-read $B3/state)  (expected 2)"
$S/backend/blkbackd-ctl status >/dev/null 2>$W/ctl.err; echo "blkbackd-ctl status rc=$?: $(cat $W/ctl.err)"
kill -CONT $EXP; sleep 2
echo "after the FS answers: vbd 3 state=$(xenstore-read $B3/state)"
grep -E 'vbd [23]/' $W/blkbackd.log | cut -d' ' -f1,3-
wait $A2; kill $EXP; wait $EXP; umount $W/mnt 2>/dev/null
teardown; rm -rf $W
