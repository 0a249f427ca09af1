#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A workload killed by its memory cgroup's OOM killer is named as such,
# with the limit and what to do, not as "bonnie++ failed (exit -9)"
# (seen once in test-harness-e2e under cgroup v1).  A stand-in bonnie++
# that allocates 256 MiB in the 16 MiB cgroup makes the kill certain;
# the cell (loop, ext4, mount, cgroup) is the real one and is torn down.
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
tmp=$(mktemp -d /tmp/harness-oom.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
mkdir "$tmp/bin"
cat > "$tmp/bin/bonnie++" <<'SH'
#!/bin/sh
case " $* " in
*" -d "*) exec python3 -c 'b = bytearray(b"x") * (256 << 20); print(len(b))' ;;
*) echo "bonnie++ stand-in (test-harness-oom)"; exit 0 ;;
esac
SH
chmod +x "$tmp/bin/bonnie++"

rc=0
PATH=$tmp/bin:$PATH blkbench run --out "$tmp/res" --workdir "$tmp" --runs 1 --where raw \
	--wce 1 --barrier 1 --fs ext4 --mem 16 --size 32 --files 1 --disk 200 --timeout 60 \
	> "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/err"; fail "exit $rc, want 1"; }
want="bonnie++ was killed by the memory cgroup's OOM killer (limit 16 MiB); raise --mem (see $tmp/res/raw/raw-wce1-barrier1-run1/bonnie.csv.err)"
grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "no line: $want"; }
! grep -q "exit -9" "$tmp/err" || fail "still says exit -9"
assert_clean "$tmp"
echo ok
