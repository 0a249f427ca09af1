#!/usr/bin/env bash
# Every option in blkbackd --help appears in blkbackd.8: a user reads the
# man page, not the source.
. ./functions.sh
man="$abs_top_srcdir/backend/blkbackd.8"
opts=$(blkbackd --help | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u)
[ -n "$opts" ] || fail "no options in blkbackd --help"
for o in $opts; do
	grep -qF -- "${o//-/\\-}" "$man" || grep -qF -- "$o" "$man" ||
		fail "blkbackd.8 does not document $o"
done
echo "all $(echo "$opts" | wc -l) options documented"
