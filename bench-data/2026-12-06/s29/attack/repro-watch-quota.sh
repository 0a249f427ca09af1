#!/bin/bash
# Repro: many vbds -> blkbackd's xenstore watches run out (E2BIG); later vbds stay Initialising with no error node
BP=/work/b-plain; cd $BP
W=$(mktemp -d /work/s29/attack/rC.XXXX)
export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock
sim/xensim --dir $W --pidfile $W/xensim.pid 2>$W/xensim.log &
until [ -s $W/xensim.pid ]; do sleep 0.1; done
backend/blkbackd -f --transport=sim --pidfile=$W/blkbackd.pid 2>$W/blkbackd.log &
until [ -s $W/blkbackd.pid ]; do sleep 0.1; done
for i in $(seq 1 70); do
  D=$(sim/xensim-ctl create-domain g$i)
  B=/local/domain/0/backend/vbd/$D/51712; F=/local/domain/$D/device/vbd/51712
  xenstore-write $F/backend $B $F/backend-id 0 $F/virtual-device 51712 $F/device-type disk $F/state 1 \
    $B/frontend $F $B/frontend-id $D $B/params memory:1M $B/mode w $B/online 1 $B/device-type disk $B/state 1
  xenstore-chmod -r $F n$D r0; xenstore-chmod -r $B n0 r$D
done
sleep 2
for D in 1 63 64 65 70; do echo "vbd $D: state=$(xenstore-read /local/domain/0/backend/vbd/$D/51712/state) error=$(xenstore-read /local/domain/0/backend/vbd/$D/51712/error 2>&1)"; done
echo "E2BIG log lines: $(grep -c 'Argument list too long' $W/blkbackd.log)"; grep -m3 'Argument list too long\|removed' $W/blkbackd.log
backend/blkbackd-ctl list | awk '{print $3}' | sort | uniq -c
timeout 20 frontend-test/blkfront-test attach --domid 70 --timeout 5000 2>&1 | tail -2
kill $(cat $W/blkbackd.pid); sleep 1; kill $(cat $W/xensim.pid); sleep 0.5
