#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The file store's I/O engine (blkbackd --io-engine, the vbd's io-engine
# key), seen from outside: which engine each vbd got (blkbackd-ctl list
# --json), byte-exact I/O on each, and the refusals:
#  - the default (auto) takes io_uring where the kernel has it; a vbd
#    whose io-engine key says libaio gets libaio beside it;
#  - a kernel without io_uring (BLKBACKD_TEST_NO_IO_URING, as blkbackd.8
#    documents for tests): auto takes libaio; --io-engine=io_uring fails
#    the file vbd (Closing, the reason in its error node) while the
#    daemon serves a RAM disk beside it; a bad io-engine value fails its
#    vbd by name; --io-engine=bogus is refused at start.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
unset BK_IO_ENGINE	# this test says which engine it wants itself

# engine_of DOM: the engine blkbackd-ctl list --json shows for DOM's
# xvda while a frontend holds it Connected (after io_works has run)
engine_of() {
	local dom=$1 hold
	blkfront-test attach --domid "$dom" --hold >"$BK_TMP/hold.$dom" 2>&1 &
	hold=$!
	xs_wait "$(bk_be "$dom")/state" 4
	blkbackd-ctl list --json | python3 -c '
import json, sys
v = {x["vbd"]: x for x in json.load(sys.stdin)["vbds"]}
e = v[sys.argv[1]]["engine"]
print("null" if e is None else e)' "$dom/51712"
	kill "$hold"
	wait "$hold" 2>/dev/null || true
}

# a kernel without io_uring: blkbackd exits at once on a bad value
rc=0; blkbackd -f --transport=sim --io-engine=bogus 2>"$BK_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'io-engine: "bogus" is not one of auto, libaio, io_uring' "$BK_TMP/err" ||
	fail "--io-engine=bogus: exit $rc, $(cat "$BK_TMP/err")"

start_xensim

# ---- default: auto ----
start_backend
new_disk 4M; new_guest; A=$DOM
add_disk $A "$params"
io_works $A
e=$(engine_of $A); [ "$e" = io_uring ] || fail "auto: engine $e, expected io_uring"
# a RAM disk has no engine
new_guest; R=$DOM
add_disk $R memory:1M
io_works $R
e=$(engine_of $R); [ "$e" = null ] || fail "memory store: engine $e, expected null"
# the per-disk key beside it
img2=$BK_TMP/disk2.img; truncate -s 4M "$img2"
new_guest; B=$DOM
add_disk $B "$img2" --be-key io-engine=libaio
io_works $B
e=$(engine_of $B); [ "$e" = libaio ] || fail "io-engine=libaio: engine $e"
# a bad value fails its vbd, naming the key
new_guest; C=$DOM
img3=$BK_TMP/disk3.img; truncate -s 4M "$img3"
add_vbd $C 51712 "$img3" io-engine=uring
xs_wait "$(bk_be $C)/state" 5
xs_is "$(bk_be $C)/error" 'io-engine: "uring" is not one of auto, libaio, io_uring'
stop_backend

# ---- a kernel without io_uring ----
export BLKBACKD_TEST_NO_IO_URING=1
start_backend
new_guest; D=$DOM
add_disk $D "$params"
io_works $D
e=$(engine_of $D); [ "$e" = libaio ] || fail "auto without io_uring: engine $e"
stop_backend

start_backend --io-engine=io_uring
new_guest; E=$DOM
add_vbd $E 51712 "$params"
xs_wait "$(bk_be $E)/state" 5
case "$(xenstore-read "$(bk_be $E)/error")" in
"params: cannot open file store \"$params\": io-engine io_uring: io_uring is unavailable: io_uring_setup: Function not implemented"*) ;;
*) fail "--io-engine=io_uring without io_uring: error node \"$(xenstore-read "$(bk_be $E)/error")\"" ;;
esac
# the daemon serves the others
good_device_works memory:1M
# the per-disk key still picks libaio there
new_guest; G=$DOM
add_disk $G "$img2" --be-key io-engine=libaio
io_works $G
e=$(engine_of $G); [ "$e" = libaio ] || fail "io-engine=libaio under --io-engine=io_uring: $e"
stop_backend
exit 0
