#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile clients of hv.sock: see test-hv-hostile.c.
. ../tests/functions.sh
. "$abs_top_srcdir/xenops/hv-functions.sh"
start_hv
dom=$(hv_create_domain) && [ -n "$dom" ] || fail "cannot create a domain"
$(valgrind_prefix) ./test-hv-hostile "$dom"
