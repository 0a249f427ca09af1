#!/bin/bash
# A/B: blkbackd before/after the evtchn-ack move, each boot blkbackd vs blkback, rr1+rw1
for side in abA plain; do
  cd /work/b-$side || exit 1
  echo "== $side $(backend/blkbackd --version) start $(date -u +%T)"
  make bench-xen ROUNDS=3 BX_TABLES=block BX_WL="rr1 rw1" BX_FIO=5 BX_STRACE=- > /work/ab-$side.out 2>&1
  echo "== $side rc=$? end $(date -u +%T)"
  cp tests/xen/bench-xen.txt /work/ab-$side.txt 2>/dev/null; cp tests/xen/bench-xen.json /work/ab-$side.json 2>/dev/null
done
