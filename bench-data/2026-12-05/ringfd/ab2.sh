#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A/B on nested Xen: blkbackd before (bc2047f: the io_uring queue's
# eventfd registered with the ring) and after (2a7b34f: the queue polls
# the ring's own fd), each boot blkbackd vs kernel blkback vs qdisk on brd
# RAM disks, rr1 + rw1, and blkbackd's system calls per request for rr1
# (BX_STRACE).  Two boots, order after before, each with BX_TRACE=2 (dom0 ftrace of two pairs of
# traced rr1 passes: system calls per request without strace in the way).
# Run as: flock -x /work/heavy.lock flock -x /work/xen.lock bash ab.sh
out=/work/main/bench-data/2026-12-05/ringfd
n=0
for side in after before; do
  n=$((n + 1))
  d=/work/b-$side
  cd $d || exit 1
  echo "== boot $n $side $(backend/blkbackd --version) start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  make bench-xen ROUNDS=3 BX_TABLES=block BX_WL="rr1 rw1" BX_FIO=5 BX_STRACE=rr1 BX_TRACE=2 > $out/boot$n-$side.out 2>&1
  echo "== boot $n $side rc=$? end $(date -u +%FT%TZ)"
  cp tests/xen/bench-xen.txt $out/boot$n-$side.txt 2>/dev/null
  cp tests/xen/bench-xen.json $out/boot$n-$side.json 2>/dev/null
done
