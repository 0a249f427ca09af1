#!/bin/bash
# Follow-up of 04: once "left alone", the guest cannot get its disk back by itself: a second
# full Closing/Closed/Initialising/new ring/Initialised cycle while blkbackd runs is ignored
# (backend stays 4, no InitWait, requests unanswered). Only the toolstack can clear it.
source /work/s30/attack/lib.sh
setup; D=$(newdom g1); truncate -s 16M $W/a.img; addvbd $D $W/a.img; waitkey $B/state 2
cat > $W/r.script <<'EOS'
fill p0 seed:1
send op=write sector=0 seg=p0 expect=OKAY
echo blkbackd down now
sleep 1500
xs-write fe state 5
xs-write fe state 6
xs-write fe state 1
ring-new wait=5000
xs-write fe state 3
echo guest reconnected while blkbackd was down
sleep 3000
echo guest tries again with blkbackd running: Closing, Closed, Initialising
xs-write fe state 5
sleep 500
xs-write fe state 6
sleep 500
xs-read be state
xs-write fe state 1
sleep 500
xs-read be state
ring-new wait=5000
xs-write fe state 3
xs-expect be state 4 timeout=5000
send op=read sector=0 seg=p1 expect=OKAY timeout=5000
EOS
$BFT script --domid $D --no-close $W/r.script > $W/r.out 2>&1 & SP=$!
until grep -q 'blkbackd down' $W/r.out; do sleep 0.1; done; kill $BBPID; wait $BBPID
until grep -q 'guest reconnected' $W/r.out; do sleep 0.1; done; start_bb
wait $SP; echo "script rc=$?"; cat $W/r.out; $S/backend/blkbackd-ctl list
teardown; rm -rf $W
