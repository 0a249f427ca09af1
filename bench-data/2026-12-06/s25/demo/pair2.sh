#!/bin/bash
# second pair, order swapped: the demo with 16 bonnie++ directories, then without; plain build of 6d04d37 with the BK_NDIRS hack in the working tree (acts only when set)
cd /work/s25
flock -x /work/heavy.lock bash -c '
for v in F2 P2; do
  echo $v start $(date -u +%T) load $(cut -d" " -f1-3 /proc/loadavg); s=$(date +%s)
  if [ $v = F2 ]; then BK_NDIRS=16 /work/b-plain/harness/blkbench demo --out /work/s25/demo$v > /work/s25/demo$v.log 2>&1
  else /work/b-plain/harness/blkbench demo --out /work/s25/demo$v > /work/s25/demo$v.log 2>&1; fi
  echo $v rc=$? in $(( $(date +%s) - s )) s
done'
