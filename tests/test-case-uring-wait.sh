#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Some of C01-C31 again with the io_uring queues sleeping in their own
# ring (BLKBACKD_URING_WAIT=1, not the default: DESIGN-NOTES.md "The
# queue thread sleeps in io_uring"), where the kernel has multishot poll;
# make check runs every case on the default, epoll_wait.  The cases
# chosen wake the thread every way it can be woken: requests and their
# completions (C05), flushes through the FSYNC SQE (C04, C10's barrier),
# a failing fdatasync (C15), an event-channel storm (C19), a reconnect
# with I/O in flight (C27: the stop, and the polls taken out as the
# thread ends).  Each runs as it does alone, with the same assertions.
# On a kernel without multishot poll blkbackd takes epoll_wait anyway
# (its engine log line says so) and the cases still run.
. ./functions.sh
failed=
for c in C04 C05 C10 C15 C19 C27; do
	t=$abs_top_srcdir/tests/test-case-$c.sh
	[ -f "$t" ] || fail "no $t"
	rc=0
	out=$(BLKBACKD_URING_WAIT=1 bash "$t" 2>&1) || rc=$?
	case $rc in
	0) echo "$c: PASS" ;;
	77) echo "$c: SKIP (as it skips alone)" ;;
	*) echo "$out" | tail -n 40; echo "$c: FAIL (exit $rc)"; failed="$failed $c" ;;
	esac
done
[ -z "$failed" ] || fail "with the queue threads waiting in io_uring_enter:$failed"
exit 0
