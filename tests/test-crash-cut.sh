#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Case C12: the guest writes and flushes through blkbackd
# --cache=volatile --record; blkcrash cut power-cuts the daemon in the
# middle (the volatile cache drops a random subset of what was not
# flushed).  Then every write acknowledged before an acknowledged flush
# is on the backing store (blkcrash check), the record log accounts for
# every byte of the backing (replay == backing), and a fresh backend
# serves blocks that are whole (blkfront-test verify --check-only).
# First, without a daemon: cut refuses a pid file naming a process that
# is not a blkbackd, or none.
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$PATH"
requires blkcrash --help

# cut sends SIGUSR2 to a blkbackd only: a pid file naming any other
# process (a stale one, reused by a new process) is refused, rc 2, and
# that process lives on; one naming no process at all is refused too
u=$(mktemp -d /tmp/crash-cut-pid.XXXXXX)
cleanup_fn rm -rf "$u"
sleep 300 &
spid=$!
cleanup_fn kill "$spid"
echo "$spid" > "$u/other.pid"
rc=0; blkcrash cut --pidfile "$u/other.pid" --timeout 2 > "$u/other.out" 2>&1 || rc=$?
cat "$u/other.out"
[ "$rc" = 2 ] || fail "cut on a sleep: exit $rc, expected 2"
kill -0 "$spid" || fail "cut signalled a process that is not a blkbackd"
grep -q 'not a blkbackd' "$u/other.out" || fail "cut on a sleep: no reason given"
kill "$spid"; wait "$spid" || true
rc=0; blkcrash cut --pidfile "$u/other.pid" --timeout 2 > "$u/gone.out" 2>&1 || rc=$?
cat "$u/gone.out"
[ "$rc" = 2 ] || fail "cut on a pid that is gone: exit $rc, expected 2"
grep -q 'does not exist' "$u/gone.out" || fail "cut on a gone pid: no reason given"

requires test -x "$abs_top_builddir/sim/xensim"
if ! blkbackd --help 2>&1 | grep -q -- '--cache=volatile' ||
   ! blkfront-test verify --help 2>&1 | grep -q -- '--log'; then
	echo "$0: skipped: blkbackd --cache=volatile or blkfront-test verify --log not there yet"
	exit 77
fi

d=$(mktemp -d /tmp/crash-cut.XXXXXX)
cleanup_fn rm -rf "$d"
start_xensim
domid=$(create_domain cutguest)
truncate -s 16M "$d/backing.img"
cp --sparse=always "$d/backing.img" "$d/base.img"

start_daemon -P "$d/bk.pid" blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" \
	-P "$d/bk.pid" --cache=volatile --record="$d/host.crashlog" 2>"$d/bk.log"
blkfront-test xl-add --domid "$domid" --params "$d/backing.img"
# (--timeout: after the cut no answer comes; the guest gives up 5 s on,
# not after the default 30 s per step)
blkfront-test verify --sim-dir "$XENSIM_DIR" --domid "$domid" --size 4M \
	--count 1000000 --iodepth 8 --flush-every 16 --seed 3 --timeout 5000 \
	--log "$d/guest.log" > "$d/verify.out" 2>&1 &
vpid=$!
cleanup_fn kill "$vpid"
flushes_acked() { [ "$(grep -c '^F ' "$d/guest.log" 2>/dev/null || true)" -ge "$1" ]; }
wait_for 30 flushes_acked 8 ||
	fail "no flushes acknowledged in 30 s: $(cat "$d/verify.out" "$d/bk.log")"
blkcrash cut --pidfile "$d/bk.pid" || fail "blkcrash cut"
wait "$vpid" && fail "verify went on after the power cut" || true
grep "power cut" "$d/bk.log" || fail "blkbackd did not log the power cut"
grep -q 'power cut (seed [0-9]*): [0-9]* of [0-9]* unflushed writes lost' "$d/bk.log" ||
	fail "the cut's summary line"

blkcrash check "$d/host.crashlog" "$d/guest.log" | tee "$d/check.out"
grep -q ': ok$' "$d/check.out" || fail "acknowledged writes lost"
grep -q ' 0 lost' "$d/check.out" || fail "check counts"

cp --sparse=always "$d/base.img" "$d/replay.img"
blkcrash replay "$d/host.crashlog" "$d/replay.img"
cmp "$d/replay.img" "$d/backing.img" || fail "the record log does not account for the backing"

# a fresh backend serves whole blocks only
start_daemon -P "$d/bk2.pid" blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" \
	-P "$d/bk2.pid" 2>"$d/bk2.log"
domid2=$(create_domain cutguest2)
blkfront-test xl-add --domid "$domid2" --params "$d/backing.img"
blkfront-test verify --sim-dir "$XENSIM_DIR" --domid "$domid2" --size 4M --check-only ||
	fail "torn or misplaced blocks after the cut"
kill_daemon "$d/bk2.pid"
echo OK
