#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The rbd driver held to the store contract from outside, as every
# driver is (test-store-conformance.sh, store-conformance.c): size,
# data byte-exact over scattered iovecs, a batch of 32 writes, flush,
# FUA and discard kept as promised or refused, bad I/O refused; then
# read-only over a prepared pattern.  Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
new_disk 16M
./store-conformance --size $((16 << 20)) "$params" || fail "rbd: not conforming"
./store-conformance --write-pattern 21 "$params" || fail "rbd: cannot write the pattern"
./store-conformance --read-only --pattern 21 "$params" || fail "rbd, read-only: not conforming"
exit 0
