#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd SIGKILLed and started again at random instants, 100 times,
# while the guest's verify runs (byte-exact, flushes every 20 writes,
# 64 KiB indirect requests, 2 queues, persistent grants, 32 in flight):
# each successor takes the vbd over (xensim shows its pid bound the
# guest's event channels and maps its rings; a xenstore watch shows no
# backend state write before the guest's close), and the guest ends with 0 I/O
# errors, 0 verification failures and 0 duplicate or unknown responses
# (blkfront-test fails the device on either, as hardened Linux blkfront
# does), and at its close nothing of the dead daemons still mapped
# (xensim released each one's pins when it died).  Then 30 times with
# barriers instead of flushes (a barrier taken again keeps its place
# behind the requests before it).  verify's last act, on the SIGINT that
# stops it, is a byte-exact read of all its 256 blocks.  At least 5 kills
# of each soak (BK_SOAK_INFLIGHT) land with requests in flight -- the
# successor finds them in the dead daemon's record and answers them: the
# soak kills on, up to 3 times its count, until it has seen that many, as
# a slow machine may answer everything between two kills more often.
# On a loaded machine a kill and takeover can take 4 s (ASan beside a
# nested-Xen boot): each soak stops early once its time (BK_SOAK_SECONDS,
# 150 s for the flush soak, a third for the barrier one) is up, with at
# least a quarter of its kills made and its kills in flight seen; fewer
# than that fails.  The guest's own bound is only a safety net past it.
# (Until the CI run neared its time limit these were 200 kills in 300 s
# and 60 in 100 s: ~400 s, make check's longest test.  A longer soak:
# BK_SOAK_KILLS=1000 BK_SOAK_SECONDS=3000 make check TESTS=...)
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim
soak() { # flush-mode kills seconds
	local kills=$2 secs=$3 want=${BK_SOAK_INFLIGHT:-5}
	local most=$((3 * kills)) least=$(($2 / 4)) t0
	[ $want -le $kills ] || want=$kills
	start_backend
	guest_with_disk 32M
	# as many writes as the kills need: the guest must still be running
	# (--foreground: our SIGINT reaches verify once, not also through
	# timeout's process group)
	timeout --foreground $((secs + 240)) blkfront-test verify --domid $DOM --queues 2 --bs 64k --size 16M \
		--count 100000000 --iodepth 32 --flush-every 20 --timeout 20000 \
		> "$BK_TMP/verify.out" 2>&1 &
	vpid=$!
	cleanup_fn kill $vpid
	local n=0 inflight=0 again=0 a pid
	# served: xensim shows the guest's rings bound and mapped by the
	# blkbackd now running (a takeover, after a kill)
	serving() { served_by $DOM "$(bk_pid)"; }
	# lines of successors that found requests of the dead one unanswered
	# (one per ring), logged before they serve.  The one count still
	# read from blkbackd's log: which requests a dead daemon had taken
	# from the ring is known only to it (req_cons is the backend's
	# private index), so no observer outside can tell a kill with
	# requests taken from one before.  It decides only whether the soak
	# ran long enough, never whether blkbackd behaved.
	answered_again() { grep -c 'taken by the previous blkbackd' "$BACKEND_LOG" || true; }
	wait_for 30 serving || fail "$1: no daemon serves the vbd"
	# from the guest's connect on, every xenstore change in order
	xs_wait "/local/domain/$DOM/device/vbd/51712/state" 4
	xs_record "$BK_TMP/watch.$1"
	t0=$SECONDS
	while [ $n -lt $kills ] || [ $inflight -lt $want ]; do
		[ $n -lt $most ] ||
			fail "$1: $n kills, $inflight of them with requests in flight: fewer than $want"
		if [ $((SECONDS - t0)) -ge "$secs" ]; then
			[ $n -ge $least ] && [ $inflight -ge $want ] ||
				fail "$1: $n kills ($inflight with requests in flight) in $secs s: fewer than $least (or $want)"
			echo "$1: $secs s are up after $n of $kills kills: the soak ends there"
			break
		fi
		# each kill hits a daemon that serves the vbd, at a random
		# instant of its first 200 ms
		sleep "$(printf '0.%03d' $((RANDOM % 200)))"
		kill -0 $vpid 2>/dev/null || { cat "$BK_TMP/verify.out"; fail "$1: the guest stopped after $n kills"; }
		pid=$(cat "$BACKEND_PIDFILE")
		kill -KILL $pid
		wait $pid 2>/dev/null || true	# gone, and its instance lock with it
		_backend_running=
		start_backend
		n=$((n + 1))
		wait_for 30 serving || fail "$1: no daemon serves the vbd after $n kills"
		a=$(answered_again)
		[ "$a" -eq "$again" ] || inflight=$((inflight + 1))
		again=$a
	done
	# let it run a little on the last one, then the guest stops
	sleep 1
	kill -INT $vpid
	wait $vpid || { tail -n 20 "$BK_TMP/verify.out"; fail "$1: the guest's verify failed"; }
	grep -qE "^verify: ok: [0-9]+ writes acknowledged" "$BK_TMP/verify.out" ||
		{ tail -n 20 "$BK_TMP/verify.out"; fail "$1: the guest's verify did not end ok"; }
	verify_read_all "$BK_TMP/verify.out" 256 "$1"
	! grep -E 'still map|leaked' "$BK_TMP/verify.out" ||
		fail "$1: the guest found a dead daemon's mappings at its close"
	# no backend state write between the guest's connect and its own
	# close (the frontend's Closing first): every kill a silent takeover
	a=$(be_writes_before_fe "$BK_TMP/watch.$1" $DOM)
	[ "$a" = 0 ] || fail "$1: $a backend state writes the guest could see before its close"
	grep -qx "/local/domain/$DOM/device/vbd/51712/state" "$BK_TMP/watch.$1" ||
		fail "$1: the watch never saw the guest close"
	echo "$1: $n kills, $inflight with requests in flight ($again rings with requests answered again); $(grep '^verify: ok' "$BK_TMP/verify.out")"
	stop_backend
	: > "$BACKEND_LOG"
}
soak flush ${BK_SOAK_KILLS:-100} ${BK_SOAK_SECONDS:-150}
guest_with_disk() { new_disk "$1"; new_guest; add_disk $DOM "$params" --be-key flush-mode=barrier; }
soak barrier ${BK_SOAK_BARRIER_KILLS:-30} $((${BK_SOAK_SECONDS:-150} / 3))
exit 0
