#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsync-tester: exactly one "fsync time: X.XXXX" line per fsync, nothing
# else on stdout; the file is removed (or kept with -k); SIGTERM stops it
# cleanly; bad input is named.
. ./functions.sh
tmp=$(mktemp -d /tmp/harness-fsync.XXXXXX)
cleanup_fn rm -rf "$tmp"

fsync-tester -n 3 -i 0.05 -s 8192 -f "$tmp/f" > "$tmp/out" || fail "fsync-tester -n 3 failed"
[ "$(wc -l < "$tmp/out")" = 3 ] || fail "want 3 lines, got $(wc -l < "$tmp/out")"
grep -cxE 'fsync time: [0-9]+\.[0-9]{4}' "$tmp/out" | grep -qx 3 || fail "line format: $(cat "$tmp/out")"
[ ! -e "$tmp/f" ] || fail "file left behind without -k"

fsync-tester -n 1 -s 4096 -k -f "$tmp/k" > /dev/null || fail "fsync-tester -k failed"
[ "$(stat -c %s "$tmp/k")" = 4096 ] || fail "-k: file missing or not 4096 bytes"

# Forever until SIGTERM: exits 0, removes its file.
fsync-tester -i 0.05 -s 4096 -f "$tmp/t" > "$tmp/t.out" &
pid=$!
wait_for 10 test -s "$tmp/t.out" || fail "no output within 10 s"
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ "$rc" = 0 ] || fail "SIGTERM: exit $rc, want 0"
[ ! -e "$tmp/t" ] || fail "SIGTERM: file left behind"

rc=0; fsync-tester -n 1 -f "$tmp/no/such/dir/f" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "open $tmp/no/such/dir/f" "$tmp/err" || fail "bad -f: rc $rc, $(cat "$tmp/err")"
rc=0; fsync-tester -i -1 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qF -- "-i -1" "$tmp/err" || fail "bad -i: rc $rc"
echo ok
