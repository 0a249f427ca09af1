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
expect_error 3 "mode: \"x\" is neither r (ro) nor w (rw)"
add_vbd 3 4 memory:1M cache=sometimes
expect_error 4 "cache: \"sometimes\""
add_vbd 3 5 memory:1M flush-mode=always
expect_error 5 "flush-mode: \"always\" is not one of auto, flush, barrier, both, none"
add_vbd 3 6 memory:1M discard-enable=yes
expect_error 6 "discard-enable: \"yes\""
# what xl writes is accepted (below); anything else is refused by name
add_vbd 3 40 memory:1M device-type=floppy
expect_error 40 "device-type: \"floppy\" is neither disk nor cdrom"
xs_is "$(bk_be 3 40)/error" "device-type: \"floppy\" is neither disk nor cdrom"
add_vbd 3 41 memory:1M removable=yes
expect_error 41 "removable: \"yes\" is neither 0 nor 1"
xs_is "$(bk_be 3 41)/error" "removable: \"yes\" is neither 0 nor 1"
add_vbd 3 42 memory:1M device-type=""
expect_error 42 "device-type: \"\" is neither disk nor cdrom"

# memory store options (test knobs, but a wrong one must not be ignored:
# delay-ms=-5 once parsed as ~4e9 ms and hung the queue thread)
d=8
for opt in delay-ms=-5 delay-ms=abc delay-ms= delay-ms=99999999999999999999 \
	   delay-ms=10001 fua=bogus; do
	add_vbd 3 $d "memory:1M,$opt"
	expect_error $d "params: cannot open memory store"
	key=${opt%%=*} val=${opt#*=}
	[ ${#val} -ge 16 ] && val=""	# longer than any valid value: refused as ""
	grep -qF "memory store: $key=\"$val\" is not" "$BACKEND_LOG" ||
		fail "no log line explaining why $opt was refused"
	# and the error node says it too
	case "$(xenstore-read "$(bk_be 3 $d)/error")" in
	"params: cannot open memory store \"1M,$opt\": $key=\"$val\" is not "*) ;;
	*) fail "$opt: error node \"$(xenstore-read "$(bk_be 3 $d)/error")\" lacks the reason" ;;
	esac
	d=$((d + 1))
done
add_vbd 3 $d "memory:1M,delay-ms=0,fua=emulated"
xs_wait "$(bk_be 3 $d)/state" 2
xs_absent "$(bk_be 3 $d)/error"

# a good one still works
add_vbd 3 7 memory:1M flush-mode=both cache=writethrough discard-enable=0
xs_wait "$(bk_be 3 7)/state" 2
xs_absent "$(bk_be 3 7)/error"
for kv in "device-type=disk removable=0" "device-type=cdrom removable=1" \
	  "device-type=disk removable=1" "device-type=cdrom removable=0"; do
	d=$((d + 1))
	# shellcheck disable=SC2086
	add_vbd 3 $d memory:1M $kv
	xs_wait "$(bk_be 3 $d)/state" 2
	xs_absent "$(bk_be 3 $d)/error"
done
stop_backend
exit 0
