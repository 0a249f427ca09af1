#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every option in the --help of blkbench (run, demo), fsmark and
# fsync-tester appears in its man page; fsmark and fsync-tester take
# --help; every man page of the tree reads cleanly with man -l (no
# warning from groff: a line starting with "." or "'" is a request and
# cuts its paragraph; a .so page cannot be read with man -l).
. ./functions.sh
requires python3 --version
man_has() {	# man_has PAGE OPTION: the roff source mentions OPTION
	local esc=${2//-/\\\\-}
	grep -qE -- "(^|[^a-z])(${esc}|${2})([^a-z-]|$)" "$top_srcdir/harness/$1" ||
		fail "$1 does not document $2"
}
for sub in run demo crash; do
	for opt in $(blkbench "$sub" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		man_has blkbench.1 "$opt"
	done
done
for opt in $(blkbench --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	man_has blkbench.1 "$opt"
done
for prog in fsmark fsync-tester; do
	for opt in $($prog -h | grep -oE -- '(^|[ [])-[a-zA-Z]( |$)' | tr -d ' [' | sort -u); do
		man_has "$prog.1" "$opt"
	done
done
for prog in fsmark fsync-tester; do
	$prog --help | grep -q -- "--help" || fail "$prog --help: no usage"
done

requires command -v man
requires command -v groff
pages=$(cd "$top_srcdir" && find backend frontend-test harness sim service -name '*.[1-8]' | sort)
[ -n "$pages" ] || fail "no man pages found under $top_srcdir"
for page in $pages; do
	f=$top_srcdir/$page
	grep -q '^\.so ' "$f" && fail "$page is a .so page: man -l $page cannot read it"
	# man(1)'s own pipeline (preconv, tbl, groff -man) with its warnings
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null) ||
		fail "man -l $page failed: $out"
	[ -z "$out" ] || fail "man --warnings -l $page: $out"
	out=$(groff -ww -z -t -man "$f" 2>&1)
	[ -z "$out" ] || fail "groff -ww -z $page: $out"
done
echo ok
