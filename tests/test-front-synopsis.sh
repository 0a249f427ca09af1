#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
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

# A bad value: exit 2 and one line naming the option, the value and what
# the option allows (never a silent exit 2 or the whole usage).
bad_value() {	# bad_value "EXPECTED MESSAGE" ARGS...
	local want=$1 rc=0 err
	shift
	err=$(blkfront-test "$@" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "blkfront-test $*: exit $rc, want 2"
	grep -qF -- "$want" <<<"$err" || fail "blkfront-test $*: said '$err', want '$want'"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "blkfront-test $*: more than one line: $err"
}
bad_value "--iodepth -3: expected a whole number in 1..4096" io --iodepth -3
bad_value "--rw sideways: expected one of read, write, randread, randwrite, rw, randrw" io --rw sideways
bad_value "--runtime -1: expected seconds, 0 or more" io --runtime -1
bad_value "--runtime 5x: expected seconds" io --runtime 5x
bad_value "--bs 0: expected a size above 0" io --bs 0
bad_value "--rwmixread 101: expected a percentage in 0..100" io --rwmixread 101
bad_value "--output-format xml: expected normal or json" io --output-format xml
bad_value "--queues 0: expected a whole number in 1..16" io --queues 0
bad_value "--domid guest: expected a domain id" attach --domid guest
bad_value "--iodepth 2000: expected a whole number in 1..1024" verify --iodepth 2000
bad_value "--cache fast: expected writethrough or writeback" export --cache fast /nonexistent
bad_value "--threads 0: expected a whole number in 1..4096" export --threads 0 /nonexistent
echo ok
