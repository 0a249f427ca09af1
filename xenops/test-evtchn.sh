#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Event channels over the simulator: see test-evtchn.c.
. ../tests/functions.sh
. "$abs_top_srcdir/xenops/hv-functions.sh"
start_hv
dom=$(hv_create_domain) && [ -n "$dom" ] || fail "cannot create a domain"
other=$(hv_create_domain) && [ -n "$other" ] || fail "cannot create a second domain"
$(valgrind_prefix) ./test-evtchn "$dom" "$other"
