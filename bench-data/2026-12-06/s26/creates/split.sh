#!/bin/bash
base="--disk-model 2008 --where dom0,domU --wce 1 --barrier 0 --runs 3 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s26/v
run() { n=$1; shift; echo $n start $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg); env "$@" /work/b-plain/harness/blkbench run $base --out /work/s26/v/$n > $n.log 2>&1; echo $n rc=$?; }
run S1 BK_SPLIT=flush; run F3 X=1; run F4 X=1; run S2 BK_SPLIT=flush
echo end $(date -u +%T)
