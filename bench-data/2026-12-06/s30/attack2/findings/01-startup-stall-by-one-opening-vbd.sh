#!/bin/bash
# One vbd whose backing open hangs (a FUSE file whose daemon is SIGSTOPped) at
# blkbackd start-up (or across blkbackd-ctl upgrade) stalls the WHOLE daemon for
# 10 s: the control socket does not answer and a vbd added meanwhile is not
# probed.  blkbackd(8): "A device's backing is opened on a thread of its own, so
# a server that is slow to answer ... delays only that device".
cd "$(dirname "$0")"; DL=0; . ./lib.sh
trap 'fuse_cleanup; cleanup' EXIT
start_sim; start_fuse
D=$(xensim-ctl create-domain g1); truncate -s 32M $W/plain.img
stop_fuse
add_vbd $D $FUSEFILE                       # its open will hang
T0=$(date +%s.%N); el() { printf %.1f $(echo "$(date +%s.%N) - $T0" | bc); }
$S/backend/blkbackd -f --transport=sim --pidfile=$W/blkbackd.pid 2>>$W/blkbackd.err & BBD=$!
sleep 1
add_vbd $D $W/plain.img 51728               # an unrelated vbd, plain file
echo "t=$(el)s added vbd $D/51728 (plain file)"
( timeout 30 blkbackd-ctl status >/dev/null; echo "t=$(el)s blkbackd-ctl status answered (rc=$?)" ) & C=$!
for i in 1 2 3 4 5 6 7 8 9 10 11; do
  echo "t=$(el)s  51728 state=$(bstate $D 51728)  pidfile=$(cat $W/blkbackd.pid 2>/dev/null || echo -)"; sleep 1
done
wait $C
echo "--- upgrade while the open still hangs:"
T0=$(date +%s.%N); timeout 30 blkbackd-ctl upgrade; echo "t=$(el)s upgrade returned rc=$?"
T0=$(date +%s.%N); timeout 30 blkbackd-ctl list >/dev/null; echo "t=$(el)s list after upgrade returned rc=$?"
grep -e "still opening" -e "51728" $W/blkbackd.err | cut -c12-
