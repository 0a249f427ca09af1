#!/bin/bash
# wce1 barrier0 creates: 64 directories vs 16, 4 invocations each, alternating
base="--disk-model 2008 --where dom0,domU --wce 1 --barrier 0 --runs 3 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1"
cd /work/s26/v
run() { n=$1; shift; echo $n start $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg); /work/b-plain/harness/blkbench run $base "$@" --out /work/s26/v/$n > $n.log 2>&1; echo $n rc=$?; }
for i in 1 2 3 4; do run D64-$i --bonnie-dirs 64; run D16-$i --bonnie-dirs 16; done
echo end $(date -u +%T)
