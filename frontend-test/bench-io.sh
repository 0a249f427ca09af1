#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-io.sh [BUILDDIR]: blkfront-test io through blkbackd on the
# simulator: 4 KiB random reads at QD32 and 1 MiB writes at QD8, 5 s each,
# on null, memory and file stores (BENCHMARKS.md).  One JSON line per job,
# preceded by "== STORE".  Needs no root.  Never part of make check.
set -eu
B=$(cd "${1:-.}" && pwd)
T=$(mktemp -d /tmp/front-bench.XXXXXX)
cleanup() {
	[ -s "$T/bk.pid" ] && kill "$(cat "$T/bk.pid")" 2>/dev/null && sleep 1
	[ -s "$T/xensim.pid" ] && kill "$(cat "$T/xensim.pid")" 2>/dev/null && sleep 0.5
	rm -rf "$T"
}
trap cleanup EXIT
"$B/sim/xensim" --dir "$T" --pidfile "$T/xensim.pid" >"$T/xensim.log" 2>&1 &
for _ in $(seq 100); do [ -s "$T/xensim.pid" ] && break; sleep 0.1; done
export XENSIM_DIR=$T XENSTORED_PATH=$T/xenstore.sock
"$B/backend/blkbackd" -f --transport=sim --sim-dir="$T" --pidfile="$T/bk.pid" 2>"$T/bk.log" &
for _ in $(seq 100); do [ -s "$T/bk.pid" ] && break; sleep 0.1; done
DOM=$("$B/sim/xensim-ctl" --dir "$T" create-domain bench)
F="$B/frontend-test/blkfront-test"
truncate -s 1G "$T/disk.img"
for params in null:1G memory:1G "$T/disk.img"; do
	"$F" xl-add --domid "$DOM" --params "$params" >/dev/null
	# fill the file first, so reads hit allocated blocks
	[ "$params" = "$T/disk.img" ] &&
		"$F" io --domid "$DOM" --rw write --bs 1M --iodepth 8 --size 1G >/dev/null
	echo "== ${params%%:*}"
	"$F" io --domid "$DOM" --rw randread --bs 4k --iodepth 32 --runtime 5 --output-format json
	"$F" io --domid "$DOM" --rw write --bs 1M --iodepth 8 --runtime 5 --output-format json
	"$F" xl-remove --domid "$DOM" >/dev/null
done
