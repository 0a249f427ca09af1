#!/bin/bash
# make bench-xen, the block table with every workload (bonnie++ included), ROUNDS=3, at the current build
cd /work/b-plain || exit 1
echo "start $(date -u +%FT%TZ) $(backend/blkbackd --version) load $(cut -d' ' -f1-3 /proc/loadavg)"
make bench-xen ROUNDS=3 BX_TABLES=block > /work/s26/bx/make.out 2>&1
echo "rc=$? end $(date -u +%FT%TZ)"
cp tests/xen/bench-xen.txt tests/xen/bench-xen.json /work/s26/bx/ 2>/dev/null
ls tests/xen/ | grep -i -E "console|serial|log" | head
