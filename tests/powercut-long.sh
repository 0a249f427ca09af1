#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# powercut-long.sh: "make crash-campaign", the power-cut campaign at
# scale (not part of make check; about 10 minutes on two cores;
# BENCHMARKS.md "Power-cut campaigns" records the runs).  .ci/run runs
# it on the plain build with CRASH_POINTS=300 (4 minutes).
#
# For ext4 and xfs: CRASH_POINTS crash points (default 1000, seed
# CRASH_SEED, default 42) with flushes honoured as FLUSH_DISKCACHE and as
# WRITE_BARRIER -- each must PASS: every crash image fsck clean, no
# acknowledged write lost -- and with flushes ignored
# (--unsafe-ignore-flush) -- which must report VIOLATIONS, or the check
# proves nothing.  Run from the top of a build tree, as root:
#   make crash-campaign [CRASH_POINTS=N] [CRASH_SEED=S]
# Prints each campaign's summary table and verdict line; exit 0 only if
# every campaign gave the verdict it must.
set -u
points=${CRASH_POINTS:-1000}
seed=${CRASH_SEED:-42}
blkcrash=harness/crash/blkcrash
bad=0

campaign() { # FS WANT(0 pass / 1 violations) [blkcrash run options]
	local fs=$1 want=$2 rc t0
	shift 2
	echo "crash-campaign: blkcrash run --fs $fs --points $points --seed $seed $*"
	t0=$SECONDS
	"$blkcrash" run --fs "$fs" --points "$points" --seed "$seed" "$@"
	rc=$?
	echo "crash-campaign: exit $rc after $((SECONDS - t0)) s"
	if [ $rc != "$want" ]; then
		echo "crash-campaign: FAILED: wanted exit $want (0: PASS, 1: VIOLATIONS)"
		bad=$((bad + 1))
	fi
}

for fs in ext4 xfs; do
	campaign $fs 0
	campaign $fs 0 --flush-mode barrier
	campaign $fs 1 --unsafe-ignore-flush
done
[ $bad = 0 ] && echo "crash-campaign: all 6 campaigns gave the verdict they must" ||
	echo "crash-campaign: $bad of 6 campaigns did not"
[ $bad = 0 ]
