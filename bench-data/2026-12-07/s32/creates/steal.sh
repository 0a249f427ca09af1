#!/bin/bash
B=/work/b-plain/harness/blkbench
base="--disk-model 2008 --where dom0 --wce 1 --barrier 0 --runs 4 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s32/v
( while :; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 0.5; done ) > /work/s32/v/S1.stat &
sp=$!
$B run $base --out /work/s32/v/S1 > S1.log 2>&1; echo S1 rc=$?
kill $sp
