#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The pin ledger: a killed dom0 process's pins are released by xensim;
# see test-ledger.c.
. ../tests/functions.sh
. "$abs_top_srcdir/xenops/hv-functions.sh"
start_hv
dom=$(hv_create_domain) && [ -n "$dom" ] || fail "cannot create a domain"
$(valgrind_prefix) ./test-ledger "$dom"
