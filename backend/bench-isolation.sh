#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-isolation.sh: what a hostile guest costs the others in latency
# ("make -C backend bench"; BENCHMARKS.md).  Never part of make check:
# tests/test-backend-scale.sh asserts by order that 64 vbds' verify
# traffic completes beside a guest that floods its xenstore state node
# and storms its event channel; here the same test runs BENCH_ISOLATION
# times (default 5) and reports, per run, the median over the vbds of
# each one's p99 latency alone and beside the hostile guest, and the
# ratio.  Goal: the median ratio at most 2 (plus 2 ms of slack on a
# shared 2-core machine, as the ratio of small numbers is noise).
set -euo pipefail
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
n=${BENCH_ISOLATION:-5}
out=$(mktemp -d "${BENCH_DIR:-/var/tmp}/bk-isolation.XXXXXX")
trap 'rm -rf "$out"' EXIT
rev=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "# blkbackd isolation: 64 vbds' p99 alone and beside a flooding, storming guest, git $rev, $(nproc) CPUs, $n runs"
ratios=()
for (( i = 1; i <= n; i++ )); do
	if ! make -s -C "$top_builddir/tests" check TESTS=test-backend-scale.sh \
		BK_SCALE_P99_OUT="$out/p99" > "$out/run.log" 2>&1; then
		cat "$out/run.log" >&2
		echo "bench-isolation: run $i: test-backend-scale failed" >&2
		exit 1
	fi
	read -r a h < <(sed -n 's/^alone=\([0-9.]*\) hostile=\([0-9.]*\)$/\1 \2/p' "$out/p99")
	r=$(awk -v a="$a" -v h="$h" 'BEGIN { printf "%.2f", h / a }')
	ratios+=("$r")
	echo "run $i: p99 alone $a us, beside the hostile guest $h us, ratio $r"
	ok=$(awk -v a="$a" -v h="$h" 'BEGIN { print (h <= 2 * a + 2000) ? "within" : "OVER" }')
	echo "run $i: $ok the goal (2 x alone + 2000 us = $(awk -v a="$a" 'BEGIN { printf "%.0f", 2 * a + 2000 }') us)"
done
med=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "median ratio $med over $n runs (goal: at most 2, plus 2 ms slack per run above)"
