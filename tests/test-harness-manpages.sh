#!/usr/bin/env bash
# Every option in the --help of blkbench (run, demo), fsmark and
# fsync-tester appears in its man page.
. ./functions.sh
requires python3 --version
man_has() {	# man_has PAGE OPTION: the roff source mentions OPTION
	local esc=${2//-/\\\\-}
	grep -qE -- "(^|[^a-z])(${esc}|${2})([^a-z-]|$)" "$top_srcdir/harness/$1" ||
		fail "$1 does not document $2"
}
for sub in run demo; do
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
echo ok
