#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Linux blkfront's EOPNOTSUPP rules: a backend that refuses a flush
# (or a barrier) makes the frontend stop sending them (flush and FUA
# withdrawn, one log line); the refused request itself fails.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
blkfront-test xl-add --domid $DOM --params memory:4M >/dev/null || fail "xl-add"

for op in flush barrier; do
	feat=$op; [ $op = flush ] && feat=flush
	"$abs_top_builddir/tests/front-bad-backend" --domid $DOM --features $feat --refuse $op \
		>"$FT/bb.$op" &
	bpid=$!
	# 16 writes with a flush (or barrier) after every 2: 8 wanted, 1 sent
	blkfront-test io --domid $DOM --rw write --bs 4k --size 64k --iodepth 1 \
		--flush-every 2 --output-format json >"$FT/j.$op" 2>"$FT/err.$op" &&
		fail "$op: io succeeded although a flush was refused"
	wait $bpid || fail "front-bad-backend failed"
	cat "$FT/j.$op" "$FT/err.$op" "$FT/bb.$op"
	grep -q "bad-backend: 1 $op requests refused" "$FT/bb.$op" ||
		fail "$op: the frontend kept sending refused requests: $(cat "$FT/bb.$op")"
	grep -q "empty $op op failed (status -2): flush and FUA withdrawn" "$FT/err.$op" ||
		fail "$op: no withdrawal message"
	grep -q '"ios":16,.*"flushes":0,"errors":1' "$FT/j.$op" ||
		fail "$op: expected 16 writes, 0 flushes, 1 error: $(cat "$FT/j.$op")"
done
exit 0
