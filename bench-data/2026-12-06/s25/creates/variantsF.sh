#!/bin/bash
# cache-on barrier-off creates: which setting keeps them together beside a CPU hog?
B=/work/b-plain/harness/blkbench
base="--disk-model 2008 --where dom0,domU --wce 1 --barrier 0 --runs 6 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --disk 256 --timeout 120 --bonnie-seed 1"
cd /work/s25/v
flock -x /work/heavy.lock bash -c "
( while :; do :; done ) & h=\$!
export BK_NDIRS=16; run() { n=\$1; shift; echo \$n start \$(date -u +%T); $B run $base \"\$@\" --out /work/s25/v/\$n > \$n.log 2>&1; echo \$n rc=\$?; }
run F --file-size 4096:2048 --journal 3
kill \$h
echo end \$(date -u +%T)"
