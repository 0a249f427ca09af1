#!/usr/bin/env bash
# Every option that "blkfront-test CMD --help" prints appears in
# blkfront-test.1, and every command has a --help.
. ./functions.sh
man="$abs_top_srcdir/frontend-test/blkfront-test.1"
text=$(sed 's/\\-/-/g; s/\\f[BIR]//g' "$man")
missing=0
for cmd in attach io verify script export xl-add xl-remove; do
	help=$(blkfront-test "$cmd" --help) || fail "blkfront-test $cmd --help failed"
	grep -q "^\.SS.*$cmd\|^\.B blkfront-test $cmd" "$man" || { echo "command $cmd not in $man"; missing=1; }
	for opt in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
		if ! grep -q -- "$opt" <<<"$text"; then
			echo "blkfront-test $cmd: option $opt is not in blkfront-test.1"
			missing=1
		fi
	done
done
[ "$missing" = 0 ] || fail "options missing from the man page"
