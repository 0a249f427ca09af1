#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `blkbackd-ctl list` printed a vbd's params and vdev nodes as they were:
# a newline in params split the vbd's row in two, and bytes that are not
# UTF-8 went out raw.  Now each vbd is one row, with a control byte, a
# backslash and a byte that is not UTF-8 shown as \xNN, and well-formed
# UTF-8 as it is; --json keeps the value itself (json-c escapes it).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
bad=$(printf '%s/a\nb\\\\c\377d-\303\251.img' "$BK_TMP")	# xenstore-write takes \\ for one backslash
add_vbd "$DOM" 51712 "$bad" "dev=$(printf 'xv\tda')"
xs_wait "$(bk_be "$DOM")/state" 5	# no such file: refused, and listed
blkbackd-ctl list > "$BK_TMP/list" || fail "list failed"
cat "$BK_TMP/list"
[ "$(grep -c "" "$BK_TMP/list")" = 2 ] || fail "list: not one header and one row"
want="$BK_TMP/a\\x0ab\\x5cc\\xffd-$(printf '\303\251').img"
grep -qF " $want" "$BK_TMP/list" || fail "list: params not shown as $want"
grep -qE "^$DOM/51712 +xv\\\\x09da " "$BK_TMP/list" || fail "list: vdev not shown as xv\\x09da"
blkbackd-ctl list --json > "$BK_TMP/list.json" || fail "list --json failed"
python3 - "$BK_TMP/list.json" "$BK_TMP" <<'EOP' || fail "list --json: $(cat "$BK_TMP/list.json")"
import json, sys
v = json.load(open(sys.argv[1]))["vbds"][0]
assert v["params"] == sys.argv[2] + "/a\nb\\c\ufffdd-\u00e9.img", repr(v["params"])
assert v["vdev"] == "xv\tda", repr(v["vdev"])
EOP
stop_backend
exit 0
