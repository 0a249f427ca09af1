#!/bin/bash
# the demo with bonnie++ -n 4:4096:2048:16 (16 directories; uncommitted hack), plain build, exclusive lock
cd /work/s25
flock -x /work/heavy.lock bash -c 'echo start $(date -u +%T) load $(cut -d" " -f1-3 /proc/loadavg); s=$(date +%s); BK_NDIRS=16 /work/b-plain/harness/blkbench demo --out /work/s25/demoF > /work/s25/demoF.log 2>&1; echo rc=$? in $(( $(date +%s) - s )) s'
