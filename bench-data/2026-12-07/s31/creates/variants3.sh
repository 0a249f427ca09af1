#!/bin/bash
# cache-on barrier-off creates (dom0): a cache of 16 MiB holding at most N writes, reads aged at 25 ms
B=/work/b-exp2/harness/blkbench
base="--disk-model 2008 --where dom0 --wce 1 --barrier 0 --runs 4 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s31/v
run() { n=$1; shift; echo $n start $(date -u +%T); env "$@" $B run $base --out /work/s31/v/$n > $n.log 2>&1; echo $n rc=$?; }
for round in 1 2; do
  run H$round BK_D8_SEGS=128 BK_D8_READ_WAIT=25000000
  run I$round BK_D8_SEGS=256 BK_D8_READ_WAIT=25000000
  run J$round BK_D8_SEGS=512 BK_D8_READ_WAIT=25000000
  run K$round BK_D8_SEGS=256
done
echo end $(date -u +%T)
