#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Persistent grants over the simulator: see test-pgrant.c.
. ./functions.sh
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
dom=$(create_domain pgrant) && [ -n "$dom" ] || fail "cannot create a domain"
$(valgrind_prefix) ./test-pgrant "$dom"
