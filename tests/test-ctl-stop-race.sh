#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two admins at once: blkbackd-ctl upgrade and blkbackd-ctl shutdown
# reach the control socket in the same instant (blkbackd is stopped
# while both connect and send).  One of them is carried out and says so
# (exit 0); the other must be told "busy" (exit 1, EXIT_REFUSED) -- not
# find its connection closed unanswered, which blkbackd-ctl reports as
# "blkbackd not running" (exit 3) though it was.  Each wins once at
# least (the first to connect is served first).  Then the daemon is
# what the winner asked: the same pid serving after an upgrade, gone
# after a shutdown.  Also a plain status sent in that instant gets an
# answer (its own, or busy), never a closed connection.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
pid=$(cat "$BACKEND_PIDFILE")
new=$abs_top_builddir/backend/blkbackd
for round in 1 2 3; do
	# the first to connect is served first: upgrade in rounds 1 and 3,
	# shutdown in round 2
	kill -STOP "$pid"
	if [ $round = 2 ]; then
		blkbackd-ctl shutdown > "$BK_TMP/down.out" 2>&1 &
		down=$!
		sleep 0.3
	fi
	blkbackd-ctl upgrade "$new" > "$BK_TMP/up.out" 2>&1 &
	up=$!
	sleep 0.3
	if [ $round != 2 ]; then
		blkbackd-ctl shutdown > "$BK_TMP/down.out" 2>&1 &
		down=$!
		sleep 0.3
	fi
	blkbackd-ctl status > "$BK_TMP/status.out" 2>&1 &
	st=$!
	sleep 0.5
	kill -CONT "$pid"
	rc_up=0 rc_down=0 rc_st=0
	wait $up || rc_up=$?
	wait $down || rc_down=$?
	wait $st || rc_st=$?
	echo "round $round: upgrade exit $rc_up ($(head -c 200 "$BK_TMP/up.out" | tr '\n' ' '))," \
		"shutdown exit $rc_down ($(head -c 200 "$BK_TMP/down.out" | tr '\n' ' '))," \
		"status exit $rc_st ($(head -c 120 "$BK_TMP/status.out" | tr '\n' ' '))"
	[ $rc_st = 0 ] || grep -q 'busy' "$BK_TMP/status.out" ||
		fail "round $round: status in that instant: exit $rc_st, not answered"
	if [ $rc_up = 0 ]; then
		[ $rc_down = 1 ] && grep -q 'busy: an upgrade is under way' "$BK_TMP/down.out" ||
			fail "round $round: the upgrade went ahead; shutdown got exit $rc_down, not busy"
		wait_for 10 blkbackd-ctl status > /dev/null ||
			fail "round $round: the upgraded blkbackd does not answer"
		[ "$(cat "$BACKEND_PIDFILE")" = "$pid" ] && kill -0 "$pid" ||
			fail "round $round: not the same process after the upgrade"
	elif [ $rc_down = 0 ]; then
		[ $rc_up = 1 ] && grep -q 'busy: blkbackd is stopping' "$BK_TMP/up.out" ||
			fail "round $round: the shutdown went ahead; upgrade got exit $rc_up, not busy"
		wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || fail "round $round: blkbackd still running"
		_backend_running=
		start_backend
		pid=$(cat "$BACKEND_PIDFILE")
		wait_for 10 blkbackd-ctl status > /dev/null || fail "restarted blkbackd does not answer"
	else
		fail "round $round: neither was carried out (upgrade exit $rc_up, shutdown exit $rc_down)"
	fi
done
stop_backend
