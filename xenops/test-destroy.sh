#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Destroying a domain: see test-destroy.c.
. ../tests/functions.sh
. "$abs_top_srcdir/xenops/hv-functions.sh"
start_hv
dom=$(hv_create_domain) && [ -n "$dom" ] || fail "cannot create a domain"
# shellcheck disable=SC2046
$(valgrind_prefix) ./test-destroy "$dom" $(hv_destroy_cmd "$dom")
# A new domain still works afterwards.
dom2=$(hv_create_domain) && [ -n "$dom2" ] || fail "cannot create a domain after destroy"
dom3=$(hv_create_domain) && [ -n "$dom3" ] || fail "cannot create a domain after destroy"
./test-evtchn "$dom2" "$dom3" >/dev/null
