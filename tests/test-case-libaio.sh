#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C01-C31 again on the other I/O engine: the default (auto) serves the
# cases' files through io_uring where the kernel has it, so this reruns
# every case with blkbackd --io-engine=libaio (BK_IO_ENGINE, honoured by
# lib-backend.sh's start_backend); libaio stays a supported engine.
# Each case runs as it does alone, with the same assertions; any one
# failing fails this test and its output is shown.  Where auto would
# pick libaio anyway (a kernel without io_uring) this says so and the
# cases still run.
. ./functions.sh
failed=
cases=$(cd "$abs_top_srcdir/tests" && ls test-case-C[0-9]*.sh | sed 's/^test-case-//; s/\.sh$//')
[ -n "$cases" ] || fail "no test-case-C*.sh found"
for c in $cases; do
	t=$abs_top_srcdir/tests/test-case-$c.sh
	rc=0
	out=$(BK_IO_ENGINE=libaio bash "$t" 2>&1) || rc=$?
	case $rc in
	0) echo "$c: PASS" ;;
	77) echo "$out"; fail "$c skipped: the libaio engine must run where the case runs" ;;
	*) echo "$out" | tail -n 40; echo "$c: FAIL (exit $rc)"; failed="$failed $c" ;;
	esac
done
[ -z "$failed" ] || fail "with --io-engine=libaio:$failed"
exit 0
