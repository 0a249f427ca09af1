#!/bin/bash
# wce1 barrier0 creates with empty files (no data journaled): more files in the same memory, a longer phase?
base="--disk-model 2008 --where dom0,domU --wce 1 --barrier 0 --runs 3 --mem 32 --size 64 --bonnie-seeks 0 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s26/v
run() { n=$1; shift; echo $n start $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg); /work/b-plain/harness/blkbench run $base "$@" --out /work/s26/v/$n > $n.log 2>&1; echo $n rc=$?; }
run E12-1 --files 12; run E16-1 --files 16; run E12-2 --files 12; run E16-2 --files 16
echo end $(date -u +%T)
