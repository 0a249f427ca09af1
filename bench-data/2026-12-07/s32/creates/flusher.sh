#!/bin/bash
# cache-on barrier-off creates (dom0): the flusher's 5 s period against 0.5 s
B=/work/b-plain/harness/blkbench
base="--disk-model 2008 --where dom0 --wce 1 --barrier 0 --runs 4 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16"
cd /work/s32/v
run() { n=$1; wb=$2; shift 2; echo $wb > /proc/sys/vm/dirty_writeback_centisecs; echo $n start $(date -u +%T) wb=$(cat /proc/sys/vm/dirty_writeback_centisecs); $B run $base "$@" --out /work/s32/v/$n > $n.log 2>&1; echo $n rc=$?; }
for round in 1 2 3; do
  run FD$round 500
  run FW$round 50
done
echo 500 > /proc/sys/vm/dirty_writeback_centisecs
echo end $(date -u +%T)
