#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A second blkbackd on the same xenstore refuses to start (exit 1, a
# message naming the first one's pid) and leaves the devices the first
# serves alone: a connected guest stays Connected and keeps doing I/O.
# The lock is an flock, so it cannot outlive its owner: after SIGKILL of
# the first daemon a new one starts at once.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend
truncate -s 16M "$FT/d.img"
add_disk $DOM "$FT/d.img"
be=$(be_dir)
blkfront-test attach --domid $DOM --hold >"$FT/hold.out" 2>&1 &
hold=$!
cleanup_fn kill $hold
xs_wait "$be/state" 4
first=$(cat "$BACKEND_PIDFILE")

rc=0
timeout 20 blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" \
	--pidfile="$FT/bk2.pid" 2>"$FT/bk2.log" || rc=$?
cat "$FT/bk2.log"
[ "$rc" = 1 ] || fail "second blkbackd: exit $rc, expected 1 (refusal)"
grep -q "another blkbackd (pid $first) already serves this xenstore" "$FT/bk2.log" ||
	fail "second blkbackd: no clear refusal naming pid $first"
[ ! -e "$FT/bk2.pid" ] || fail "the refused blkbackd wrote its pidfile"
bk_sync	# (the first daemon has handled whatever came before)
xs_is "$be/state" 4
kill -0 $hold 2>/dev/null || fail "the guest lost its device: $(cat "$FT/hold.out")"
kill $hold; wait $hold 2>/dev/null || true
timeout 60 blkfront-test io --domid $DOM --size 1M --timeout 10000 >"$FT/io.out" 2>&1 ||
	fail "the first blkbackd stopped serving: $(cat "$FT/io.out")"

# SIGKILL releases the lock: no stale lock blocks the next start
kill -KILL "$first"
wait_for 10 eval "! kill -0 $first 2>/dev/null" || fail "blkbackd survived SIGKILL"
_backend_running=
start_backend
timeout 60 blkfront-test io --domid $DOM --size 1M --timeout 10000 >"$FT/io.out" 2>&1 ||
	fail "no service after restarting over a SIGKILLed daemon: $(cat "$FT/io.out")"
stop_backend
exit 0
