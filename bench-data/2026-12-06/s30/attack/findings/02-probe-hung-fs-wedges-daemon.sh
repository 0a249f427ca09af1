#!/bin/bash
# A vbd whose params names a file on a hung filesystem (FUSE daemon stopped) wedges
# blkbackd's control thread at probe time: no other vbd is probed, blkbackd-ctl gets no
# answer, SIGTERM is not acted on, until the filesystem answers again.
source /work/s30/attack/lib.sh
setup
D1=$(newdom g1); D2=$(newdom g2); D3=$(newdom g3); D4=$(newdom g4)
truncate -s 16M $W/a.img $W/c.img $W/d.img
addvbd $D1 $W/a.img; waitkey $B/state 2
addvbd $D4 $W/d.img; B4=$B; waitkey $B4/state 2
mkdir $W/mnt
$BFT export --domid $D1 $W/mnt > $W/exp.log 2>&1 & EXP=$!     # a FUSE fs: guest 1's disk as $W/mnt/disk
until [ -e $W/mnt/disk ]; do sleep 0.1; done
# guest 4 is connected and doing I/O, before anything hangs
$BFT io --domid $D4 --rw randwrite --runtime 12 --iodepth 4 > $W/io4.out 2>&1 & IO4=$!
sleep 1
kill -STOP $EXP                                     # the FUSE daemon stops answering
echo "== admin adds guest 2's vbd on the hung FUSE file, then guest 3's on a plain file"
addvbd $D2 $W/mnt/disk; B2=$B
addvbd $D3 $W/c.img;    B3=$B
sleep 3
echo "vbd 2 (hung fs) state=$(xenstore-read $B2/state)  vbd 3 (plain file) state=$(xenstore-read $B3/state)  (expected vbd 3: 2 InitWait)"
echo "== blkbackd-ctl status (10 s)"
start=$(date +%s); $S/backend/blkbackd-ctl status >/dev/null 2>$W/ctl.err; rc=$?
echo "blkbackd-ctl status rc=$rc after $(( $(date +%s)-start )) s: $(cat $W/ctl.err)"
echo "== guest 3 tries to connect (5 s)"
$BFT attach --domid $D3 --timeout 5000 >/dev/null 2>$W/att3.err; echo "attach guest 3 rc=$?: $(tail -1 $W/att3.err)"
echo "== SIGTERM to blkbackd, 5 s"
kill -TERM $BBPID; sleep 5; kill -0 $BBPID 2>/dev/null && echo "blkbackd still running 5 s after SIGTERM" || echo "blkbackd exited"
wait $IO4; echo "guest 4 io (connected before the hang): $(tail -1 $W/io4.out)"
echo "== FUSE daemon resumes"
kill -CONT $EXP; sleep 3
echo "vbd 3 state=$(xenstore-read $B3/state 2>/dev/null); blkbackd alive: $(kill -0 $BBPID 2>/dev/null && echo yes || echo no)"
kill $EXP; wait $EXP; umount $W/mnt 2>/dev/null
teardown; rm -rf $W
