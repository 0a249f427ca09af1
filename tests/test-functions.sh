#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The test helpers themselves: cleanup runs LIFO, requires skips, wait_for times out.
. ./functions.sh
out=$(bash -c '. ./functions.sh; cleanup_fn echo one; cleanup_fn echo two; true')
[ "$out" = "$(printf 'two\none')" ] || fail "cleanup order: got '$out'"
rc=0; bash -c '. ./functions.sh; requires false' >/dev/null || rc=$?
[ "$rc" = 77 ] || fail "requires false exited $rc, want 77"
if wait_for 1 false; then fail "wait_for false succeeded"; fi
echo ok
