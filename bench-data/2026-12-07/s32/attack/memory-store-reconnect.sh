#!/bin/bash
# A memory: disk is emptied when its guest reconnects (driver reload, kexec,
# blkfront-test run twice), although the same blkbackd still serves the vbd
# and the guest's FLUSH was answered OKAY.
. /tmp/attack32-repro/env.sh
newguest; adddisk $DOM memory:1M
printf 'fill p0 seed:3\nsend op=write sector=0 seg=p0 expect=OKAY\nsend op=flush expect=OKAY\nsend op=read sector=0 seg=p1 expect=OKAY\ncheck p1 seed:3\n' > $W/w
printf 'send op=read sector=0 seg=p1 expect=OKAY\ncheck p1 seed:3\n' > $W/r
echo "--- connection 1: write, flush, read back"; blkfront-test script --domid $DOM $W/w; echo "rc=$?"
echo "--- connection 2 (same vbd, same blkbackd pid $BKPID): read"; blkfront-test script --domid $DOM $W/r; echo "rc=$?"
alive; grep -a "vbd $DOM/" $W/blkbackd.log | sed 's/^[^ ]* //'
teardown; rm -rf $W
