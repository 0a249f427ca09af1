#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-ceph.sh: "make check-ceph".  One throw-away Ceph cluster
# (cluster.sh: a mon, a mgr and an OSD on 127.0.0.1, cephx), then every
# rbd test on it: the test-rbd-*.sh here, and the hostile-request cases
# tests/test-case-C*.sh again with their disks on RBD images
# (BK_STORE=rbd, lib-backend.sh new_disk).  Each test becomes one
# automake result, CDIR/NAME.trs + CDIR/NAME.log, so the parallel-tests
# tools and .ci/run count them; the cluster is torn down at exit.
#
# Environment (set by tests/ceph.mk): srcdir (this directory), CDIR
# (results), top_srcdir, top_builddir; CEPH_OBJECTSTORE (memstore, or
# bluestore on a file); TESTS (a subset, by name: "test-rbd-resize C01").
# Exit: 0 all passed, 1 something failed, 77 skipped (reason printed and
# recorded as CDIR/check-ceph.trs SKIP).
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")" && pwd)}
top_srcdir=${top_srcdir:-$srcdir/../..}
top_builddir=${top_builddir:-$top_srcdir}
CDIR=${CDIR:-$top_builddir/tests/ceph}
mkdir -p "$CDIR"
rm -f "$CDIR"/*.trs "$CDIR"/*.log

# trs NAME RESULT [DETAIL]: one automake test result; its log is on stdin
trs() {
	local n=$1 r=$2 d=${3:-}
	{
		echo "$n: $r${d:+ ($d)}"
		[ "$r" = SKIP ] && echo "$n: skipped: $d"
		cat
	} > "$CDIR/$n.log"
	printf ':test-result: %s\n:global-test-result: %s\n:recheck: %s\n:copy-in-global-log: %s\n' \
		"$r" "$r" "$([ "$r" = FAIL ] && echo yes || echo no)" "$([ "$r" = FAIL ] && echo yes || echo no)" \
		> "$CDIR/$n.trs"
	printf '%s: %s%s\n' "$r" "$n" "${d:+ ($d)}"
}
skip_all() {
	echo "check-ceph: skipped: $*"
	trs check-ceph SKIP "$*" </dev/null >/dev/null
	exit 77
}

# ---- can this machine do it? ----
grep -q '^#define HAVE_LIBRBD 1' "$top_builddir/config.h" 2>/dev/null ||
	skip_all "blkbackd was built without the rbd store (librbd-dev, librados-dev: tests/ceph/install-deps, then configure again)"
missing=
for c in ceph-mon ceph-mgr ceph-osd ceph-authtool monmaptool ceph rbd uuidgen ss; do
	command -v $c >/dev/null || missing="$missing $c"
done
[ -z "$missing" ] || skip_all "missing:$missing (run tests/ceph/install-deps)"

wait_for() {
	local secs=$1; shift
	local end=$(( $(date +%s) + secs ))
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}
. "$srcdir/cluster.sh"
trap 'ceph_stop' EXIT
trap 'exit 1' INT TERM
t0=$(date +%s)
if ! ceph_start > "$CDIR/cluster.out" 2>&1; then
	cat "$CDIR/cluster.out"
	tail -n 20 "$CEPH_DIR"/log/* 2>/dev/null | trs ceph-cluster FAIL "$(tail -n 1 "$CDIR/cluster.out")"
	exit 1
fi
trs ceph-cluster PASS "$(cat "$CDIR/cluster.out")" < "$CDIR/cluster.out"
export CEPH_CONF CEPH_POOL

# ---- the tests ----
all=
for t in "$srcdir"/test-rbd-*.sh; do all="$all $(basename "$t" .sh)"; done
# the hostile-request cases whose disks come from new_disk (or that run
# such a case again with other options): the others serve memory: or
# file disks only, and would test nothing of the rbd store.  C29 (a
# same-VM double open, as a migration does) is a file-only feature: on
# RBD the second open is refused by the exclusive lock, which
# test-rbd-move checks.
for t in "$top_srcdir"/tests/test-case-C*.sh; do
	n=$(basename "$t" .sh | sed 's/^test-case-//')
	[ "$n" != C29 ] || continue
	grep -qE 'new_disk|guest_with_disk|test-case-C[0-9]+\.sh' "$t" || continue
	all="$all $n"
done
want=${TESTS:-$all}
rc=0
for n in $want; do
	case $n in
	C[0-9]*) script=$top_srcdir/tests/test-case-$n.sh name=rbd-case-$n ;;
	*) script=$srcdir/$n.sh name=$n ;;
	esac
	[ -f "$script" ] || { trs "$name" FAIL "no $script" </dev/null; rc=1; continue; }
	s0=$(date +%s)
	(cd "$top_builddir/tests" && BK_STORE=rbd timeout -k 10 300 bash "$script") \
		> "$CDIR/$name.out" 2>&1
	r=$?
	secs=$(( $(date +%s) - s0 ))
	case $r in
	0) trs "$name" PASS "$secs s" < "$CDIR/$name.out" ;;
	77) trs "$name" SKIP "$(grep -m1 'skipped' "$CDIR/$name.out" | sed 's/.*skipped: //')" < "$CDIR/$name.out" ;;
	*) trs "$name" FAIL "exit $r after $secs s" < "$CDIR/$name.out"; rc=1
	   tail -n 30 "$CDIR/$name.out" ;;
	esac
	rm -f "$CDIR/$name.out"
done
echo "check-ceph: $(( $(date +%s) - t0 )) s"
exit $rc
