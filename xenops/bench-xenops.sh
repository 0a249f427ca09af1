#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run bench-xenops on a fresh xensim (see bench-xenops.c); "make bench".
# Extra arguments go to bench-xenops (--rounds N, --seconds S).
. ../tests/functions.sh
. "$abs_top_srcdir/xenops/hv-functions.sh"
start_hv
dom=$(hv_create_domain bench) && [ -n "$dom" ] || fail "cannot create a domain"
echo "# $(date -u +%FT%TZ) git=$(git -C "$abs_top_srcdir" describe --always --dirty 2>/dev/null || echo unknown) cpus=$(nproc) cflags='$(sed -n 's/^CFLAGS = //p' Makefile)'"
./bench-xenops "$@" "$dom"
