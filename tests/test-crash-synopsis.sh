#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every option that blkcrash --help and blkcrash run --help list appears
# in blkcrash.1.
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$PATH"
requires blkcrash --help
man=$abs_top_srcdir/harness/crash/blkcrash.1
opts=$( { blkcrash --help; blkcrash run --help; } | grep -o -- '--[a-z][a-z-]*' | sort -u)
[ -n "$opts" ] || fail "no options in --help"
page=$(sed 's/\\-/-/g' "$man")
for o in $opts; do
	grep -q -- "$o" <<<"$page" || fail "$o is in --help but not in blkcrash.1"
done
for c in dump replay check fsck cut run; do
	grep -q "^\.B blkcrash $c" "$man" || fail "command $c missing from the SYNOPSIS"
done
echo OK
