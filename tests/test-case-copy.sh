#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C01-C15 again on the other data path: blkbackd without persistent
# grants (--feature-persistent=0), so the guest's pages are grant-copied
# (or mapped per request) rather than mapped once.  Every case runs as it
# does alone, with the same assertions; any one failing fails this test
# and its output is shown.
. ./functions.sh
failed=
for n in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15; do
	t=$abs_top_srcdir/tests/test-case-C$n.sh
	rc=0
	out=$(BK_BACKEND_ARGS=--feature-persistent=0 bash "$t" 2>&1) || rc=$?
	case $rc in
	0) echo "C$n: PASS" ;;
	77) echo "$out"; fail "C$n skipped: the copy path must run where the case runs" ;;
	*) echo "$out" | tail -n 40; echo "C$n: FAIL (exit $rc)"; failed="$failed C$n" ;;
	esac
done
[ -z "$failed" ] || fail "without persistent grants:$failed"
exit 0
