#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A/B on nested Xen: blkbackd before (main ba6e092: epoll_wait) and after
# (branch uring, see the boot lines: io_uring queues sleep in their ring), each boot
# blkbackd vs kernel blkback vs qdisk on brd RAM disks, rr1+rw1, and
# blkbackd's system calls per request for rr1 (BX_STRACE).  Four boots,
# order before after after before (before after when started late).
# bench-syscalls on the simulator ran separately (sysc.sh).
# Run as: flock -x /work/heavy.lock flock -x /work/xen.lock bash ab.sh
# (this run: flock -s on the heavy lock: the exclusive one was never free
# between 19:53 and 20:12 UTC, other sessions' heavy jobs kept it shared)
out=/work/wt-uring/bench-data/2026-12-04/uring-wait
n=0
sides="before after after before"
# a late start (the locks were busy): one pair of boots, as ab-evtchn did
[ "$(date -u +%H%M)" -ge 2030 ] && sides="before after"
echo "== sides: $sides"
for side in $sides; do
  n=$((n + 1))
  d=/work/b-uring; [ $side = before ] && d=/work/b-uring-before
  cd $d || exit 1
  echo "== boot $n $side $(backend/blkbackd --version) start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "   heavy jobs beside it: $(ps -eo etime,args | grep -E '^ *[0-9:-]+ flock -s /work/heavy' | grep -v grep | sed 's/  */ /g' | cut -c1-110 | tr '\n' ';')"
  make bench-xen ROUNDS=3 BX_TABLES=block BX_WL="rr1 rw1" BX_FIO=5 BX_STRACE=rr1 > $out/boot$n-$side.out 2>&1
  echo "== boot $n $side rc=$? end $(date -u +%FT%TZ)"
  cp tests/xen/bench-xen.txt $out/boot$n-$side.txt 2>/dev/null
  cp tests/xen/bench-xen.json $out/boot$n-$side.json 2>/dev/null
done
