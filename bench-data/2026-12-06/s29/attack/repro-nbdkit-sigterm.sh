#!/bin/bash
# Repro: nbd vbd never reconnects after nbdkit is stopped with SIGTERM and started again
BP=/work/b-plain; cd $BP
W=$(mktemp -d /work/s29/attack/rA.XXXX)
export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock BLKBACKD_STORE_DIR=$BP/backend/.libs
sim/xensim --dir $W --pidfile $W/xensim.pid 2>$W/xensim.log &
until [ -s $W/xensim.pid ]; do sleep 0.1; done
backend/blkbackd -f --transport=sim --trace=$W/trace --pidfile=$W/blkbackd.pid 2>$W/blkbackd.log &
until [ -s $W/blkbackd.pid ]; do sleep 0.1; done
truncate -s 16M $W/disk.img
nbdkit -U $W/nbd.sock -P $W/nbd.pid file $W/disk.img; sleep 0.3
D=$(sim/xensim-ctl create-domain guest1)
B=/local/domain/0/backend/vbd/$D/51712; F=/local/domain/$D/device/vbd/51712
xenstore-write $F/backend $B $F/backend-id 0 $F/virtual-device 51712 $F/device-type disk $F/state 1 \
  $B/frontend $F $B/frontend-id $D $B/params "nbd:nbd+unix:///?socket=$W/nbd.sock" $B/mode w \
  $B/online 1 $B/device-type disk $B/state 1
xenstore-chmod -r $F n$D r0; xenstore-chmod -r $B n0 r$D; sleep 1
{ echo "fill p0 seed:9"; echo "send op=write sector=0 seg=p0 expect=OKAY"; echo "send op=flush nr_segments=0 expect=OKAY"
  echo "sleep 3000"; for i in 1 2 3 4 5; do echo "send op=read sector=0 seg=p2 nopush"; echo push; echo "wait-all timeout=10000"; echo "sleep 1000"; done; } > $W/s.script
frontend-test/blkfront-test script --domid $D --no-close $W/s.script & S=$!
sleep 1.5
P=$(cat $W/nbd.pid); kill $P                      # graceful stop (systemctl stop does this)
wait $S; echo "script rc=$?"
kill -0 $P && echo "nbdkit $P (SIGTERMed 7 s ago) is still running"
grep ' op=' $W/trace
grep -E 'nbd|error' $W/blkbackd.log | tail -7
backend/blkbackd-ctl list
kill -9 $P; sleep 2; grep -E "connection lost" $W/blkbackd.log; kill $(cat $W/blkbackd.pid); sleep 1; kill $(cat $W/xensim.pid); wait $(cat $W/xensim.pid) 2>/dev/null; sleep 0.5
