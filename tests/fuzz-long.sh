#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz-long.sh: "make fuzz-long", hours of fuzzing (never part of make
# check or CI; BENCHMARKS.md records the runs).
#
#   1. both libFuzzer targets side by side, one per core: ring/fuzz-request
#      (the request validator and indirect-page parser against an
#      independent re-implementation) and sim/fuzz-xs (xensim's xenstore
#      protocol engine), each until FUZZ_LONG_RUNS inputs (default 10^8)
#      or FUZZ_LONG_SECONDS (default 0: no time limit), whichever first;
#   2. then the stateful control-plane fuzzer (tests/test-fuzz-control.sh:
#      blkbackd over xensim, random interleavings of toolstack, frontend
#      and daemon events) for FUZZ_CONTROL_LONG_SECONDS (default 3600),
#      seed FUZZ_CONTROL_SEED, by default a new one from the clock (make
#      check's run always uses the same; the seed is printed either way).
#
# Run from the top of a build tree (as root, for step 2):
#   make fuzz-long [FUZZ_LONG_RUNS=N] [FUZZ_LONG_SECONDS=N] [FUZZ_CONTROL_LONG_SECONDS=N]
# Logs: fuzz-long/{ring,sim,control}.log; new inputs and crash artifacts
# where "make fuzz" leaves them (ring/fuzz-findings/, sim/fuzz-findings/);
# "make -C ring fuzz-merge" and "make -C sim fuzz-merge" then minimize the
# new inputs into the committed corpora (fuzz.mk).
# Exit status 0 only if no target found a crash or an invariant violation.
set -u
make=${MAKE:-make}
runs=${FUZZ_LONG_RUNS:-100000000}
secs=${FUZZ_LONG_SECONDS:-0}
csecs=${FUZZ_CONTROL_LONG_SECONDS:-3600}
logs=fuzz-long
mkdir -p "$logs"
# ASan's allocation stack traces cost a third of fuzz-xs's time; a crash
# found here replays with full stacks: ./sim/fuzz-xs ARTIFACT
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}

summary() { # NAME LOG RC
	local name=$1 log=$2 rc=$3 n t
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	t=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
	if [ "$rc" = 0 ] && [ -n "$n" ]; then
		echo "fuzz-long: $name: ${n} inputs in ${t:-?} s ($(( n / (${t:-1} > 0 ? ${t:-1} : 1) )) /s), no crash"
	else
		echo "fuzz-long: $name: FAILED (exit $rc) after ${n:-?} inputs; see $log"
		grep -m 5 -E '^==[0-9]+==ERROR|runtime error|^SUMMARY|deadly signal|Assertion' "$log"
	fi
}

echo "fuzz-long: libFuzzer targets to $runs inputs each$( [ "$secs" != 0 ] && echo " or $secs s" ), side by side; started $(date -u +%FT%TZ)"
$make -C ring fuzz FUZZ_SECONDS="$secs" FUZZ_RUNS="$runs" > "$logs/ring.log" 2>&1 &
ring=$!
# (a hang is an input over 300 s: the wall clock, and a niced run on a
# busy machine was once starved of the CPU for 15 s inside one input)
$make -C sim fuzz FUZZ_SECONDS="$secs" FUZZ_RUNS="$runs" FUZZ_TIMEOUT=300 > "$logs/sim.log" 2>&1 &
sim=$!
wait $ring; rc_ring=$?
wait $sim; rc_sim=$?
summary "ring/fuzz-request" "$logs/ring.log" $rc_ring
summary "sim/fuzz-xs" "$logs/sim.log" $rc_sim

rc_control=0
if [ "$csecs" != 0 ]; then
	echo "fuzz-long: stateful control-plane fuzzer for $csecs s; started $(date -u +%FT%TZ)"
	FUZZ_CONTROL_SEED=${FUZZ_CONTROL_SEED:-$(date +%s)} \
	FUZZ_CONTROL_SECONDS=$csecs $make -C tests check \
		TESTS=test-fuzz-control.sh TEST_TIMEOUT=$((csecs + 600)) > "$logs/control.log" 2>&1
	rc_control=$?
	# the fuzzer's own summary and seed lines, from the test's log
	grep -h '^fuzz-control:' tests/test-fuzz-control.sh.log 2>/dev/null | tail -n 3
	[ $rc_control = 0 ] && echo "fuzz-long: control plane: passed" ||
		echo "fuzz-long: control plane: FAILED; see tests/test-fuzz-control.sh.log"
fi
echo "fuzz-long: finished $(date -u +%FT%TZ)"
[ $rc_ring = 0 ] && [ $rc_sim = 0 ] && [ $rc_control = 0 ]
