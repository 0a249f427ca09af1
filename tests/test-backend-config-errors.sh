#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad per-device configuration: each one gets a clear message in the
# device's "error" node naming the key, the device goes Closing (5), and
# the daemon keeps serving the other devices.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
start_backend
# a frontend domain that exists (a vbd of a domain that does not is
# closed at once: Closing would pass by too fast to be seen)
new_guest; F=$DOM

expect_error() { # devid key-prefix
	local be
	be=$(bk_be $F "$1")
	xs_wait "$be/state" 5
	case "$(xenstore-read "$be/error")" in
	"$2"*) ;;
	*) fail "$be/error is \"$(xenstore-read "$be/error")\", expected \"$2...\"" ;;
	esac
	grep -q "vbd $F/$1: $2" "$BACKEND_LOG" || fail "no log line naming $2 for $F/$1"
}

add_vbd $F 1 ""
expect_error 1 "params: missing or empty (a file, a block device, or DRIVER:ARG with DRIVER file|memory|null|disk2008|rbd|nbd)"
add_vbd $F 2 "bogus:/x"
expect_error 2 "params: unknown storage driver"
add_vbd $F 3 memory:1M mode=x
expect_error 3 "mode: \"x\" is neither r (ro) nor w (rw)"
add_vbd $F 4 memory:1M cache=sometimes
expect_error 4 "cache: \"sometimes\""
add_vbd $F 5 memory:1M flush-mode=always
expect_error 5 "flush-mode: \"always\" is not one of auto, flush, barrier, both, none"
add_vbd $F 6 memory:1M discard-enable=yes
expect_error 6 "discard-enable: \"yes\""
# what xl writes is accepted (below); anything else is refused by name
add_vbd $F 40 memory:1M device-type=floppy
expect_error 40 "device-type: \"floppy\" is neither disk nor cdrom"
xs_is "$(bk_be $F 40)/error" "device-type: \"floppy\" is neither disk nor cdrom"
add_vbd $F 41 memory:1M removable=yes
expect_error 41 "removable: \"yes\" is neither 0 nor 1"
xs_is "$(bk_be $F 41)/error" "removable: \"yes\" is neither 0 nor 1"
add_vbd $F 42 memory:1M device-type=""
expect_error 42 "device-type: \"\" is neither disk nor cdrom"
# the guest is the domain the directory is under: a frontend-id that
# names another, or no number, is the toolstack's mistake
add_vbd $F 43 memory:1M frontend-id=abc
expect_error 43 "frontend-id: \"abc\" is not $F, the domain this directory is for"
add_vbd $F 45 memory:1M frontend=
expect_error 45 "frontend: \"\" is not a frontend directory"
add_vbd $F 46 memory:1M frontend=local/domain/$F/device/vbd/46
expect_error 46 "frontend: \"local/domain/$F/device/vbd/46\" is not a frontend directory"
# said once (the error node's own watch event does not say it again):
# by bk_sync blkbackd has handled that event
bk_sync
[ "$(grep -c "vbd $F/45: frontend: " "$BACKEND_LOG")" = 1 ] || fail "a bad frontend was said more than once"
add_vbd $F 44 memory:1M frontend-id=$((F + 1))
expect_error 44 "frontend-id: \"$((F + 1))\" is not $F, the domain this directory is for"

# memory store options (test knobs, but a wrong one must not be ignored:
# delay-ms=-5 once parsed as ~4e9 ms and hung the queue thread)
d=8
for opt in delay-ms=-5 delay-ms=abc delay-ms= delay-ms=99999999999999999999 \
	   delay-ms=10001 fua=bogus; do
	add_vbd $F $d "memory:1M,$opt"
	expect_error $d "params: cannot open memory store"
	key=${opt%%=*} val=${opt#*=}
	[ ${#val} -ge 16 ] && val=""	# longer than any valid value: refused as ""
	grep -qF "memory store: $key=\"$val\" is not" "$BACKEND_LOG" ||
		fail "no log line explaining why $opt was refused"
	# and the error node says it too
	case "$(xenstore-read "$(bk_be $F $d)/error")" in
	"params: cannot open memory store \"1M,$opt\": $key=\"$val\" is not "*) ;;
	*) fail "$opt: error node \"$(xenstore-read "$(bk_be $F $d)/error")\" lacks the reason" ;;
	esac
	d=$((d + 1))
done
add_vbd $F $d "memory:1M,delay-ms=0,fua=emulated"
xs_wait "$(bk_be $F $d)/state" 2
xs_absent "$(bk_be $F $d)/error"

# a good one still works
add_vbd $F 7 memory:1M flush-mode=both cache=writethrough discard-enable=0
xs_wait "$(bk_be $F 7)/state" 2
xs_absent "$(bk_be $F 7)/error"
for kv in "device-type=disk removable=0" "device-type=cdrom removable=1" \
	  "device-type=disk removable=1" "device-type=cdrom removable=0"; do
	d=$((d + 1))
	# shellcheck disable=SC2086
	add_vbd $F $d memory:1M $kv
	xs_wait "$(bk_be $F $d)/state" 2
	xs_absent "$(bk_be $F $d)/error"
done
stop_backend
exit 0
