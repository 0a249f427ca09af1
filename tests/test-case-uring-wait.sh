#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Some of C01-C31 again with the io_uring queues' other two ways of
# learning of completions (DESIGN-NOTES.md "How an io_uring queue
# wakes"); make check runs every case on the default, epoll_wait on the
# ring's own fd.
#   BLKBACKD_URING_WAIT=eventfd  epoll_wait on an eventfd the ring
#                                writes per completion (what a kernel
#                                without multishot poll gets)
#   BLKBACKD_URING_WAIT=1        the thread sleeps in io_uring_enter on
#                                its own ring, where the kernel has
#                                multishot poll
# The cases chosen wake the thread every way it can be woken: requests
# and their completions (C05), flushes through the FSYNC SQE (C04, C10's
# barrier), a failing fdatasync (C15), an event-channel storm (C19), a
# reconnect with I/O in flight (C27: the stop, and the polls taken out
# as the thread ends).  Each runs as it does alone, with the same
# assertions, and blkbackd's engine line must name the mode asked for.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
need_frontend
unset BK_IO_ENGINE
start_xensim
failed=
modes="eventfd 1"
# under valgrind, which has no multishot poll, mode 1 takes the default
# way (its engine line says so): only the eventfd way is new there
[ "${BLK_VALGRIND:-}" = 1 ] && modes=eventfd
for mode in $modes; do
	# the mode asked for is the one blkbackd took (its engine line),
	# else the cases below would only test the default again
	case $mode in
	eventfd) want="queue threads wait in epoll_wait on an eventfd the ring writes per completion" ;;
	1) want="queue threads wait in io_uring_enter \\(multishot poll" ;;
	esac
	: > "$BACKEND_LOG"
	BLKBACKD_URING_WAIT=$mode start_backend
	new_disk 4M; new_guest
	add_disk $DOM "$params"
	io_works $DOM
	grep -Eq "I/O engine: io_uring .*$want" "$BACKEND_LOG" ||
		fail "BLKBACKD_URING_WAIT=$mode: $(grep 'I/O engine' "$BACKEND_LOG")"
	stop_backend
	for c in C04 C05 C10 C15 C19 C27; do
		t=$abs_top_srcdir/tests/test-case-$c.sh
		[ -f "$t" ] || fail "no $t"
		rc=0
		out=$(BLKBACKD_URING_WAIT=$mode bash "$t" 2>&1) || rc=$?
		case $rc in
		0) echo "$mode $c: PASS" ;;
		77) echo "$mode $c: SKIP (as it skips alone)" ;;
		*) echo "$out" | tail -n 40; echo "$mode $c: FAIL (exit $rc)"; failed="$failed $mode/$c" ;;
		esac
	done
done
[ -z "$failed" ] || fail "with the queue threads' other wait modes:$failed"
exit 0
