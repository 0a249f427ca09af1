#!/bin/bash
# Repro: an NBD server that accepts but never answers the handshake freezes blkbackd's control thread 10 s per vbd
BP=/work/b-plain; cd $BP
W=$(mktemp -d /work/s29/attack/rB.XXXX)
export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock BLKBACKD_STORE_DIR=$BP/backend/.libs
sim/xensim --dir $W --pidfile $W/xensim.pid 2>$W/xensim.log &
until [ -s $W/xensim.pid ]; do sleep 0.1; done
backend/blkbackd -f --transport=sim --pidfile=$W/blkbackd.pid 2>$W/blkbackd.log &
until [ -s $W/blkbackd.pid ]; do sleep 0.1; done
python3 -c "
import socket; s=socket.socket(socket.AF_UNIX); s.bind('$W/mute.sock'); s.listen(16); c=[]
while True: c.append(s.accept()[0])" & MUTE=$!
sleep 0.3
add() { local D=$1 P=$2 B=/local/domain/0/backend/vbd/$1/51712 F=/local/domain/$1/device/vbd/51712
  xenstore-write $F/backend $B $F/backend-id 0 $F/virtual-device 51712 $F/device-type disk $F/state 1 \
    $B/frontend $F $B/frontend-id $D $B/params "$P" $B/mode w $B/online 1 $B/device-type disk $B/state 1
  xenstore-chmod -r $F n$D r0; xenstore-chmod -r $B n0 r$D; }
for i in 1 2 3; do add $(sim/xensim-ctl create-domain mute$i) "nbd:nbd+unix:///?socket=$W/mute.sock"; done
truncate -s 8M $W/ok.img; D=$(sim/xensim-ctl create-domain healthy); add $D $W/ok.img
T0=$(date +%s.%N)
backend/blkbackd-ctl status; echo "blkbackd-ctl status: exit $?"
until [ "$(xenstore-read /local/domain/0/backend/vbd/$D/51712/state)" = 2 ]; do sleep 0.1; done
echo "healthy file vbd reached InitWait after $(echo "$(date +%s.%N) - $T0" | bc) s"
grep -E 'handshake|InitWait' $W/blkbackd.log
kill $MUTE $(cat $W/blkbackd.pid); sleep 1; kill $(cat $W/xensim.pid); sleep 0.5
