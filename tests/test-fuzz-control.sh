#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control plane fuzzed: fuzz-control (fuzz-control.c, DESIGN-NOTES.md
# "Stateful control-plane fuzzing") drives random interleavings of
# toolstack, frontend and daemon steps against one xensim and the
# blkbackd it starts (and restarts) itself, and checks the invariants
# after each sequence.
#   FUZZ_CONTROL_SECONDS  how long (default 60; 30 under valgrind)
#   FUZZ_CONTROL_SEED     the seed (default 20261202: make check runs the
#                         same sequences each time; make fuzz-long picks
#                         a new one); printed, so a failure replays with
#                         fuzz-control --seed S --replay SEQ ...
#   FUZZ_CONTROL_MIN_SEQUENCES  fewer sequences fail the run (default:
#                         one per 4 s; ASan beside other tests did
#                         about 4 a second; under valgrind, one per 15 s,
#                         where it did one per 5 s on a busy machine)
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
requires test -x ./fuzz-control

if [ "${BLK_VALGRIND:-}" = 1 ]; then
	secs=${FUZZ_CONTROL_SECONDS:-30} slow=5 per=15
else
	secs=${FUZZ_CONTROL_SECONDS:-60} slow=1 per=4
fi
min=${FUZZ_CONTROL_MIN_SEQUENCES:-$(( ${secs%.*} / per ))}
seed=${FUZZ_CONTROL_SEED:-20261202}
# RSS tells of memory kept only without ASan's quarantine (and not under
# valgrind): the daemon may then grow by at most 4 MiB over a run
asan_no_quarantine
rss=0
if rss_meaningful; then rss=4096; fi

start_xensim
# its files in the build directory: a run lasts minutes, and a /tmp
# cleaner (or another test) must not take its log away meanwhile
dir=$(mktemp -d "$PWD/fuzz-control.XXXXXX")
[ -n "${BK_KEEP:-}" ] || cleanup_fn rm -rf "$dir"
log=$dir/blkbackd.log
pidfile=$dir/blkbackd.pid
# the blkbackd of the moment, if fuzz-control left one (it removes its
# pidfile on a clean stop)
_fz_kill() {
	local pid
	pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] || return 0
	kill -KILL "$pid" 2>/dev/null || true
}
cleanup_fn _fz_kill "$pidfile"
echo "fuzz-control: $secs s, seed $seed"
# the fuzzer itself is not run under valgrind (blkbackd is)
./fuzz-control --seed "$seed" --seconds "$secs" --slow "$slow" --rss-slack "$rss" \
	--min-sequences "$min" \
	--pidfile "$pidfile" --log "$log" -- \
	$(valgrind_prefix) blkbackd -f --transport=sim --pidfile="$pidfile" \
	--sim-dir="$XENSIM_DIR" ${BK_BACKEND_ARGS:-} || {
	echo "---- the end of blkbackd's log ----"
	tail -n 80 "$log"
	fail "fuzz-control failed (seed $seed; the whole log: $log, kept with BK_KEEP=1)"
}
