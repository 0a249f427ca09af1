#!/bin/bash
# one round, rw1 and bonnie, each once more under strace: blkbackd's system calls per request for bonnie++ -D
cd /work/b-plain || exit 1
echo "start $(date -u +%FT%TZ) $(backend/blkbackd --version) load $(cut -d' ' -f1-3 /proc/loadavg)"
make bench-xen ROUNDS=1 BX_TABLES=block BX_WL="rw1 bonnie" BX_STRACE="rw1 bonnie" > /work/s26/bx2/make.out 2>&1
echo "rc=$? end $(date -u +%FT%TZ)"
cp tests/xen/bench-xen.txt tests/xen/bench-xen.json tests/xen/bench-xen-console.txt /work/s26/bx2/ 2>/dev/null
