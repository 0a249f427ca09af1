#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsmark: fs_mark's file counts, subdirectory policy, output format (exact
# column widths), and clear errors for bad options.
. ./functions.sh
tmp=$(mktemp -d /tmp/harness-fsmark.XXXXXX)
cleanup_fn rm -rf "$tmp"

# Rows must be exactly printf "%6d %12d %12d %12.1f %16d".
check_rows() {	# check_rows FILE SIZE COUNT_STEP NROWS
	local n=0 line fsuse count size fps ovh want
	grep -qx 'FSUse%        Count         Size    Files/sec     App Overhead' "$1" ||
		fail "$1: no exact fs_mark header"
	while IFS= read -r line; do
		read -r fsuse count size fps ovh <<<"$line"
		want=$(printf "%6d %12d %12d %12.1f %16d" "$fsuse" "$count" "$size" "$fps" "$ovh")
		[ "$line" = "$want" ] || fail "row not in fs_mark's format: '$line' vs '$want'"
		n=$((n + 1))
		[ "$count" = $((n * $3)) ] || fail "row $n: Count $count, want $((n * $3))"
		[ "$size" = "$2" ] || fail "row $n: Size $size, want $2"
	done < <(sed -n '/^FSUse%/,$p' "$1" | tail -n +2)
	[ "$n" = "$4" ] || fail "$1: $n rows, want $4"
}

# -k, 2 threads, 3 loops (-L keeps files): 2 x 3 x 25 files of 3000 bytes.
fsmark -d "$tmp/a" -s 3000 -w 1000 -n 25 -L 3 -t 2 -S 1 > "$tmp/a.out" ||
	fail "fsmark -t 2 -L 3 failed"
check_rows "$tmp/a.out" 3000 50 3
[ "$(find "$tmp/a" -type f | wc -l)" = 150 ] || fail "-L 3 -t 2 -n 25: want 150 files"
[ -z "$(find "$tmp/a" -type f ! -size 3000c)" ] || fail "a file is not 3000 bytes"
# Names: 40 characters, 16 of time stamp ('~' padded) then 24 of [A-Z0-9].
bad=$(find "$tmp/a" -type f -printf '%f\n' | grep -cvE '^[0-9a-f~]{16}[A-Z0-9]{24}$' || true)
[ "$bad" = 0 ] || fail "$bad file names not in fs_mark's form"

# Without -k the files are removed after each iteration.
fsmark -d "$tmp/b" -s 0 -n 40 -S 0 > "$tmp/b.out" || fail "fsmark -S 0 failed"
check_rows "$tmp/b.out" 0 40 1
[ "$(find "$tmp/b" -type f | wc -l)" = 0 ] || fail "files left without -k"

# -D 4 -N 10: round robin, 10 files per subdirectory, in 4 subdirectories.
fsmark -d "$tmp/c" -D 4 -N 10 -n 40 -s 10 -k -S 2 > "$tmp/c.out" || fail "fsmark -D -N failed"
check_rows "$tmp/c.out" 10 40 1
for d in "$tmp"/c/*; do
	[ "$(find "$d" -type f | wc -l)" = 10 ] || fail "$d: want 10 files"
done
[ "$(find "$tmp/c" -mindepth 1 -type d | wc -l)" = 4 ] || fail "want 4 subdirectories"
# -r 0 -p 8: names are the time stamp only
fsmark -d "$tmp/d" -n 1 -s 1 -k -p 8 -r 0 -S 5 >/dev/null || fail "-p 8 -r 0 failed"
find "$tmp/d" -type f -printf '%f\n' | grep -qxE '[0-9a-f]{8}' || fail "-p 8 -r 0 name"

# Bad options: exit 1 with a message naming the option.
expect_error() {	# expect_error PATTERN ARGS...
	local pat=$1 rc=0; shift
	fsmark "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "fsmark $*: exit $rc, want 1"
	grep -qF -- "$pat" "$tmp/err" || { cat "$tmp/err"; fail "fsmark $*: no '$pat'"; }
}
expect_error "give at least one directory with -d" -n 1
expect_error "-S 7: expected a number in 0..6" -d "$tmp/e" -S 7
expect_error "-t 3 is not a multiple of the 2 directories" -d "$tmp/e" -d "$tmp/f" -t 3
expect_error "-N needs -D" -d "$tmp/e" -N 5
expect_error "-n many: expected a number" -d "$tmp/e" -n many
expect_error "mkdir $tmp/nodir/sub: No such file or directory" -d "$tmp/nodir/sub" -n 1
echo ok
