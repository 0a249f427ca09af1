#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Some of C01-C31 again on io_uring with the queue threads waiting in
# epoll_wait, as on a kernel without multishot poll (before 5.13):
# there blkbackd does not let io_uring own the queue thread's sleep
# (DESIGN-NOTES.md "Waiting in io_uring") and says so in its engine log
# line; BLKBACKD_TEST_NO_URING_WAIT makes it take that path here.  The
# cases chosen wake the thread every way it can be woken: requests and
# their completions (C05), flushes through the FSYNC SQE (C04, C10's
# barrier), a failing fdatasync (C15), an event-channel storm (C19), a
# reconnect with I/O in flight (C27: the stop).  Each runs as it does
# alone, with the same assertions; the default path runs every case in
# make check.
. ./functions.sh
failed=
for c in C04 C05 C10 C15 C19 C27; do
	t=$abs_top_srcdir/tests/test-case-$c.sh
	[ -f "$t" ] || fail "no $t"
	rc=0
	out=$(BLKBACKD_TEST_NO_URING_WAIT=1 bash "$t" 2>&1) || rc=$?
	case $rc in
	0) echo "$c: PASS" ;;
	77) echo "$c: SKIP (as it skips alone)" ;;
	*) echo "$out" | tail -n 40; echo "$c: FAIL (exit $rc)"; failed="$failed $c" ;;
	esac
done
[ -z "$failed" ] || fail "with the queue threads waiting in epoll_wait:$failed"
exit 0
