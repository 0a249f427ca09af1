#!/bin/bash
# write(2) calls per request of blkbackd, old vs new rbd module (strace -f -c over one ring run + one fio run)
cd /work/main
for v in old new; do
  m=/work/s25/mod-old; [ $v = new ] && m=/work/b-plain/backend/.libs
  ( BENCH_WARMUP=0 BENCH_REPEAT=1 BENCH_ROWS=randread-4k-qd32 BLKBACKD_STORE_DIR=$m top_builddir=/work/b-plain backend/bench-rbd.sh 2>&1 | grep -v "^blkfront" > /work/s25/sc-$v.txt ) &
  for i in $(seq 100); do p=$(pgrep -f "backend/.libs/blkbackd -f --transport=sim|backend/blkbackd -f --transport=sim" | head -1); [ -n "$p" ] && break; sleep 0.2; done
  strace -f -c -p $p -o /work/s25/sc-$v.strace 2>/dev/null &
  wait
  sleep 1
  echo "== $v"; grep "path=ring" /work/s25/sc-$v.txt; grep -E "calls|write|read|epoll|futex" /work/s25/sc-$v.strace | head
done
