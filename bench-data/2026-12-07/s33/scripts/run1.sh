#!/bin/bash
# dom0 wce0 barrier0, demo's 2008 settings, traced
cd /work/b-plain
export BK_D8_TRACE=/work/s33/$1/trace
flock -x /work/heavy.lock harness/blkbench run --where ${2:-dom0} --wce 0 --barrier 0 --fs ext3:data=journal --workload bonnie --runs ${3:-6} --warmup 0 \
 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16 --disk-model 2008 --out /work/s33/$1/res
