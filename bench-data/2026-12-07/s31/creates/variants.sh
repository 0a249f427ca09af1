#!/bin/bash
# cache-on barrier-off creates (dom0): the model's read wait bound and cache size
B=/work/b-exp/harness/blkbench
base="--disk-model 2008 --where dom0 --wce 1 --barrier 0 --runs 4 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s31/v
run() { n=$1; shift; echo $n start $(date -u +%T); env "$@" $B run $base --out /work/s31/v/$n > $n.log 2>&1; echo $n rc=$?; }
for round in 1 2; do
  run A$round X=1
  run B$round BK_D8_READ_WAIT=25000000
  run C$round BK_D8_CACHE=8388608
done
echo end $(date -u +%T)
