#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkcrash run checks its arguments before it starts anything (and
# before it asks for root): a --size too small for the filesystem or not
# a number, a --seed or --points that is not a number, each refused with
# exit 2 and a message naming the option, not a failure of some tool
# half-way through the campaign (or after it).
. ./functions.sh
PATH="$abs_top_builddir/harness/crash:$PATH"
requires blkcrash --help
requires blkcrash run --help

d=$(mktemp -d /tmp/crash-run-args.XXXXXX)
cleanup_fn rm -rf "$d"

refused() {	# refused OPTION-NAME ARGS...: exit 2, one "error: --OPTION" line
	local what=$1 rc=0
	shift
	blkcrash run --workdir "$d/w" "$@" > "$d/out" 2>&1 || rc=$?
	sed "s/^/$*: /" "$d/out"
	[ "$rc" = 2 ] || fail "run $*: exit $rc, expected 2"
	grep -q "error: $what" "$d/out" || fail "run $*: no message about $what"
	[ ! -e "$d/w" ] || fail "run $*: it started (made its work directory)"
}

refused --size --size 1
refused --size --size 0
refused --size --size 31
refused --size --fs xfs --size 128
refused --size --size abc
refused --size --size 99999999999
refused --size --size=-5
refused --seed --seed xyz
refused --seed --seed=1e5
refused --seed --seed 1234567890123456789012
refused --points --points 0
refused --points --points many
echo OK
