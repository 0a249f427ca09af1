#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every option in blkbackd --help appears in blkbackd.8, and every option
# and command of blkbackd-ctl --help in blkbackd-ctl.8 (its SYNOPSIS for
# the options, COMMANDS for the commands, EXIT STATUS for each status
# --help names): a user reads the man page, not the source.
. ./functions.sh
man="$abs_top_srcdir/backend/blkbackd.8"
opts=$(blkbackd --help | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u)
[ -n "$opts" ] || fail "no options in blkbackd --help"
for o in $opts; do
	grep -qF -- "${o//-/\\-}" "$man" || grep -qF -- "$o" "$man" ||
		fail "blkbackd.8 does not document $o"
done
echo "all $(echo "$opts" | wc -l) options documented"

ctlman="$abs_top_srcdir/backend/blkbackd-ctl.8"
blkbackd-ctl --help > help.ctl.$$ || fail "blkbackd-ctl --help failed"
trap 'rm -f help.ctl.$$' EXIT
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$ctlman")
# the options: the first word of each option line, and shutdown's --close
ctlopts=$(sed -nE 's/^ +(-[a-zA-Z], )?(--[a-z][a-z0-9-]+).*/\2/p' help.ctl.$$; echo --close)
[ "$(echo "$ctlopts" | wc -l)" -ge 8 ] || fail "blkbackd-ctl --help: options: $ctlopts"
for o in $ctlopts; do
	case $o in --help|--version|--close) grep -qF -- "${o//-/\\-}" "$ctlman" ;;
	*) grep -qF -- "${o//-/\\-}" <<<"$synopsis" ;; esac ||
		fail "blkbackd-ctl.8 does not have $o (in its SYNOPSIS)"
done
commands=$(sed -n '/^Commands:/,/^$/p' help.ctl.$$ | grep -oE '^  [a-z]+' | tr -d ' ')
[ "$(echo "$commands" | wc -w)" = 6 ] || fail "blkbackd-ctl --help: commands: $commands"
for c in $commands; do
	sed -n '/^\.SH COMMANDS/,/^\.SH OPTIONS/p' "$ctlman" | grep -qE "^\.(B|BR|BI) $c( |\$)" ||
		fail "blkbackd-ctl.8 COMMANDS does not have $c"
done
# the exit statuses --help names are the page's, with the same words
exits=$(sed -n '/^Exit status:/,/^$/p' help.ctl.$$ | tr '\n' ' ')
for n in 0 1 2 3 4; do
	grep -q "[ ,:]$n [a-z]" <<<"$exits" || fail "blkbackd-ctl --help does not name exit status $n"
	sed -n '/^\.SH EXIT STATUS/,/^\.SH/p' "$ctlman" | grep -qx "\.B $n" ||
		fail "blkbackd-ctl.8 EXIT STATUS does not have $n"
done
