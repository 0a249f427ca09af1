#!/bin/bash
# Is the cache-on barrier-off create phase paced by the host?  Same cells idle and beside one CPU hog.
B=/work/b-plain/harness/blkbench
common="--disk-model 2008 --where dom0,domU --wce 1,0 --barrier 0 --runs 4 --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1"
cd /work/s24/hog
flock -x /work/heavy.lock bash -c "
echo idle start \$(date -u) load \$(cut -d' ' -f1-3 /proc/loadavg); $B run $common --out /work/s24/hog/idle > idle.log 2>&1; echo idle rc=\$?
( while :; do :; done ) & h=\$!
echo hog start \$(date -u); $B run $common --out /work/s24/hog/hog > hog.log 2>&1; echo hog rc=\$?
kill \$h
echo end \$(date -u)"
