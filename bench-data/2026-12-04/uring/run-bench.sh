#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The runs behind BENCHMARKS.md "io_uring": backend/bench.sh's default
# section (4 KiB randread QD32, 1 MiB write QD4, ring vs fio alternating
# BENCH_REPEAT times inside each run) once per engine per round, the
# engines' order rotating from round to round; then bench-syscalls.sh.
# Usage: run-bench.sh BUILDDIR OUTDIR [ROUNDS]   (under flock -x /work/heavy.lock)
set -euo pipefail
b=$1 out=$2 rounds=${3:-3}
src=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
engines=(libaio io_uring)
for (( r=0; r<rounds; r++ )); do
	order=("${engines[@]}")
	(( r % 2 )) && order=(io_uring libaio)
	for e in "${order[@]}"; do
		echo "== round $r engine $e $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
		top_builddir=$b BENCH_SECTIONS=default BENCH_BACKEND_ARGS=--io-engine=$e \
			"$src/backend/bench.sh" 2>/dev/null | tee "$out/bench-r$r-$e.txt"
	done
done
