#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest's own frontend keys quoted in blkbackd's errors: protocol,
# ring-page-order and multi-queue-num-queues went into the log and the
# error node as the guest wrote them, so a newline let one guest forge
# a whole log line (a timestamp and another vbd's name included) and an
# escape sequence reached the admin's terminal.  Now every byte of the
# guest's outside printable ASCII is a '?': each error is one line that
# starts with blkbackd's timestamp, and the error node says why in one
# line too.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
esc=$(printf '\033')
forged="2026-01-01T00:00:00.000000+00:00 blkbackd: vbd 99/51712: InitWait -> Connected (FORGED)"
keys=("protocol=x86_64-abi
$forged $esc[2J"
      "ring-page-order=1
$forged"
      "multi-queue-num-queues=2
$forged")
doms=()
for k in "${keys[@]}"; do
	new_guest; doms+=("$DOM")
	add_disk $DOM memory:1M
	# the connect is refused: the script's own exit says nothing here
	blkfront-test script --domid $DOM --timeout 3000 --fe-key "$k" /dev/null \
		>"$BK_TMP/s$DOM.out" 2>&1 || true
	wait_for 10 xenstore-read "$(bk_be $DOM)/error" >/dev/null ||
		{ cat "$BK_TMP/s$DOM.out"; fail "vbd $DOM/51712: no error node for the bad key"; }
done
for d in "${doms[@]}"; do
	err=$(xenstore-read "$(bk_be $d)/error")
	case "$err" in
	*$'\n'*|*"$esc"*) fail "vbd $d/51712: the error node holds the guest's raw bytes: $err" ;;
	esac
	grep -q "^[0-9T:.+-]* blkbackd: error: vbd $d/51712: " "$BACKEND_LOG" ||
		fail "vbd $d/51712: its error is not logged"
done
grep -qF "unknown ABI \"x86_64-abi?$forged ?[2J\"" "$BACKEND_LOG" ||
	{ cat "$BACKEND_LOG"; fail "the bad protocol is not quoted, made printable"; }
# every line of the log is blkbackd's own: its timestamp first, no escape
if grep -avE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[+-][0-9:]+ blkbackd: ' "$BACKEND_LOG" | grep -q .; then
	grep -avE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[+-][0-9:]+ blkbackd: ' "$BACKEND_LOG" | cat -A
	fail "a guest's value split a log line"
fi
if grep -aq "$esc" "$BACKEND_LOG"; then
	fail "a guest's escape sequence reached the log"
fi
stop_backend
exit 0
