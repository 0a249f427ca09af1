#!/bin/bash
# wce1 barrier0 creates: 16 directories (F) vs 16 directories + reads before background destages (EF)
base="--disk-model 2008 --where dom0,domU --wce 1 --barrier 0 --runs 3 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s26/v
run() { n=$1; b=$2; echo $n start $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg); /work/$b/harness/blkbench run $base --out /work/s26/v/$n > $n.log 2>&1; echo $n rc=$?; }
run F1 b-plain; run EF1 b-e; run EF2 b-e; run F2 b-plain
echo end $(date -u +%T)
