#!/bin/bash
# The toolstack side removes ONE key of a connected vbd's backend directory (not the directory):
#  - state: blkbackd treats the vbd as removed at once: unmaps the ring, forgets the vbd
#    (blkbackd-ctl list empty), writes nothing; the frontend, still Connected, gets no answer
#    ever (Linux's xenbus removes a backend device only when its directory goes).
#  - frontend-id (or frontend), then a blkbackd restart: the new blkbackd neither serves nor
#    closes it: backend stays state 4, requests unanswered, list shows STATE "none".
source /work/s30/attack/lib.sh
for k in state frontend-id; do
  setup; D=$(newdom g1); truncate -s 16M $W/a.img; addvbd $D $W/a.img; waitkey $B/state 2
  printf 'fill p0 seed:1\nsend op=write sector=0 seg=p0 expect=OKAY\nsleep 2500\nsend op=write sector=8 seg=p0 expect=OKAY timeout=4000\n' > $W/m.script
  echo "=== xenstore-rm \$B/$k under a connected guest$( [ $k != state ] && echo ', then blkbackd restarted')"
  $BFT script --domid $D --no-close $W/m.script > $W/m.out 2>&1 & SP=$!
  sleep 0.7; xenstore-rm $B/$k
  if [ $k != state ]; then sleep 0.5; kill $BBPID; wait $BBPID; start_bb; fi
  wait $SP; echo "script rc=$?: $(cat $W/m.out)"
  echo "backend state=$(xenstore-read $B/state 2>&1) frontend state=$(xenstore-read $F/state)"
  echo "blkbackd-ctl list:"; $S/backend/blkbackd-ctl list
  grep 'vbd 1/51712' $W/blkbackd.log | tail -3 | cut -d' ' -f2-
  teardown; rm -rf $W
done
