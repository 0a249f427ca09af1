#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every option and command in xensim/xensim-ctl --help is in xensim.1.
. "${top_builddir:-..}/tests/functions.sh"

man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "${srcdir:-.}/xensim.1")
for prog in xensim xensim-ctl; do
	help=$($prog --help) || fail "$prog --help: exit status $?"
	opts=$(grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' <<<"$help" | tr -d ' ,' | sort -u)
	[ -n "$opts" ] || fail "$prog --help lists no options"
	for o in $opts; do
		grep -qe "$o" <<<"$man" || fail "$prog: option $o missing from xensim.1"
	done
done
for cmd in create-domain destroy-domain list; do
	grep -q "$cmd" <<<"$(xensim-ctl --help)" || fail "xensim-ctl --help lacks $cmd"
	grep -q "$cmd" <<<"$man" || fail "xensim.1 lacks $cmd"
done
