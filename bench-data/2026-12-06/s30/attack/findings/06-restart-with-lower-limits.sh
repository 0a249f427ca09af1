#!/bin/bash
# The admin changes BLKBACKD_OPTS and restarts blkbackd (SIGTERM, start) under a connected
# guest (README: "a stop or restart (SIGTERM) keeps the guests' devices attached, and the next
# blkbackd takes them over, so a guest sees a pause in its I/O, not an error").
#  --max-queues=1 / --max-ring-page-order=0: a guest that negotiated more is "left alone" as if
#    kernel xen-blkback served it: backend stays Connected, nobody serves its rings, its I/O
#    hangs for good (blkbackd-ctl list: left-alone).
#  --max-indirect-segments=0 or 8: the guest's indirect requests (negotiated against 256, it
#    uses 32) are answered EOPNOTSUPP / ERROR: the guest sees I/O errors.
source /work/s30/attack/lib.sh
for opt in --max-queues=1 --max-ring-page-order=0 --max-indirect-segments=0 --max-indirect-segments=8; do
  setup; D=$(newdom g1); truncate -s 16M $W/a.img; addvbd $D $W/a.img; waitkey $B/state 2
  $BFT verify --domid $D --size 8M --count 20000 --bs 64k --iodepth 8 --queues 4 --ring-order 2 --timeout 8000 > $W/v.out 2>&1 & V=$!
  sleep 1; kill $BBPID; wait $BBPID; start_bb $opt
  echo "=== restarted with $opt"
  wait $V; echo "guest verify rc=$?: $(grep -m1 -E 'FAILED|ok:|no response' $W/v.out | cut -c1-200)"
  grep 'vbd 1/51712' $W/blkbackd.log | grep -E 'taken over|left alone' | tail -1 | cut -d' ' -f2-
  grep -v issue= $W/trace | grep -m1 'status=-' | cut -d' ' -f4-
  echo "backend state=$(xenstore-read $B/state); list: $($S/backend/blkbackd-ctl list | tail -1 | cut -c1-40)"
  teardown; rm -rf $W
done
