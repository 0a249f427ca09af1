#!/usr/bin/env bash
# Bad per-device configuration: each one gets a clear message in the
# device's "error" node naming the key, the device goes Closing (5), and
# the daemon keeps serving the other devices.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
start_backend

expect_error() { # devid key-prefix
	local be
	be=$(bk_be 3 "$1")
	xs_wait "$be/state" 5
	case "$(xenstore-read "$be/error")" in
	"$2"*) ;;
	*) fail "$be/error is \"$(xenstore-read "$be/error")\", expected \"$2...\"" ;;
	esac
	grep -q "vbd 3/$1: $2" "$BACKEND_LOG" || fail "no log line naming $2 for 3/$1"
}

add_vbd 3 1 ""
expect_error 1 "params: missing or empty"
add_vbd 3 2 "bogus:/x"
expect_error 2 "params: unknown storage driver"
add_vbd 3 3 memory:1M mode=x
expect_error 3 "mode: \"x\" is neither r nor w"
add_vbd 3 4 memory:1M cache=sometimes
expect_error 4 "cache: \"sometimes\""
add_vbd 3 5 memory:1M flush-mode=always
expect_error 5 "flush-mode: \"always\" is not one of auto, flush, barrier, both, none"
add_vbd 3 6 memory:1M discard-enable=yes
expect_error 6 "discard-enable: \"yes\""

# a good one still works
add_vbd 3 7 memory:1M flush-mode=both cache=writethrough discard-enable=0
xs_wait "$(bk_be 3 7)/state" 2
xs_absent "$(bk_be 3 7)/error"
stop_backend
exit 0
