#!/bin/bash
# A frontend that writes state 2 (InitWait) is treated as fatal, while blkbackd(8)
# says only "a frontend state other than 0..6 (a number it is not, 7, 8 or more) is fatal".
source /work/s30/attack/lib.sh
setup; D=$(newdom g1); truncate -s 8M $W/disk.img; addvbd $D $W/disk.img; waitkey $B/state 2
echo "backend state before: $(xenstore-read $B/state)"
xenstore-write $F/state 2
sleep 1
echo "backend state after fe state=2: $(xenstore-read $B/state)"
echo "error node: $(xenstore-read $B/error 2>&1)"
grep 'vbd 1/51712' $W/blkbackd.log | cut -d' ' -f2-
teardown; rm -rf $W
