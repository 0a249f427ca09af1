#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-syscalls before (main ba6e092) and after (branch uring), polling off as in a PV dom0
out=/work/wt-uring/bench-data/2026-12-04/uring-wait
mkdir -p $out/strace-before $out/strace-after
for side in before after; do
  d=/work/b-uring; [ $side = before ] && d=/work/b-uring-before
  echo "== $side $($d/backend/blkbackd --version 2>&1 | head -1) $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
  BENCH_BACKEND_ARGS=--poll-max-us=0 BENCH_ROUNDS=2 BENCH_OUT=$out/strace-$side top_builddir=$d bash /work/wt-uring/backend/bench-syscalls.sh
done
