#!/bin/bash
# cache-on creates (dom0, both barrier settings): ext3's commit timer against a long one
B=/work/b-plain/harness/blkbench
base="--disk-model 2008 --where dom0 --wce 1 --barrier 1,0 --runs 4 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s32/v
run() { n=$1; shift; echo $n start $(date -u +%T); $B run $base "$@" --out /work/s32/v/$n > $n.log 2>&1; echo $n rc=$?; }
for round in 1 2; do
  run D$round
  run L$round --mount-opts commit=60
done
echo end $(date -u +%T)
