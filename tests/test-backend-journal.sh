#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Under systemd, stderr is the journal: each line must start with its
# syslog priority ("<3>" error, "<6>" info, "<7>" debug), which the
# journal files it under (journalctl -p err), and carry no time of its
# own.  systemd says so with JOURNAL_STREAM=DEV:INODE of that stream; here
# stderr is a file and JOURNAL_STREAM names that file.  A JOURNAL_STREAM
# naming another stream (a service's shell redirecting stderr), or none,
# leaves the terminal/file format: local time, name, "error: ".  So does
# --log-file, for the file, whatever stderr is.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
requires stat -c %d:%i /
start_xensim
new_guest; F=$DOM

# one info line (start-up) and one error line (a vbd naming no driver)
# from a blkbackd whose stderr is LOG and whose environment has
# JOURNAL_STREAM=STREAM (none if empty); then stop it
run_one() { # LOG DEVID STREAM [BLKBACKD-OPTION...]
	BACKEND_LOG=$1
	if [ -n "$3" ]; then export JOURNAL_STREAM=$3; else unset JOURNAL_STREAM; fi
	start_backend -D xenbus "${@:4}"
	add_vbd $F "$2" "bogus:/x"
	xs_wait "$(bk_be $F "$2")/state" 5
	stop_backend
}

# ---- stderr is the journal ----
: > "$BK_TMP/journal"
run_one "$BK_TMP/journal" 1 "$(stat -c %d:%i "$BK_TMP/journal")"
j=$BK_TMP/journal
err=$(grep "vbd $F/1: params: unknown storage driver" "$j") ||
	fail "no error line for the bad vbd in $j"
case "$err" in
"<3>error: vbd $F/1: params: unknown storage driver"*) ;;
*) fail "error line for the journal: \"$err\", expected \"<3>error: vbd $F/1: ...\"" ;;
esac
grep -q '^<6>serving /local/domain/0/backend/vbd ' "$j" ||
	fail "no info line \"<6>serving ...\" in $j"
# bk_dbg is compiled out by --disable-debug
if grep -q '^#define ENABLE_DEBUG 1' "$abs_top_builddir/config.h"; then
	grep -q '^<7>debug: ' "$j" || fail "no debug line starting with <7>debug: in $j"
fi
# every line has a priority, none a time or the name (the journal has them)
if grep -Ev '^<[367]>' "$j" | grep -q '^'; then
	fail "lines without a priority in $j: $(grep -Ev '^<[367]>' "$j" | head -3)"
fi
if grep -Eq "$BK_STAMP_RE|^<[0-9]>blkbackd: " "$j"; then
	fail "a journal line carries a time or the name: $(grep -E "$BK_STAMP_RE|^<[0-9]>blkbackd: " "$j" | head -1)"
fi
# each level to its priority: errors <3> only, debug <7> only
if grep -E '^<[^3]>error: ' "$j" | grep -q '^'; then
	fail "an error line not at <3>: $(grep -E '^<[^3]>error: ' "$j" | head -1)"
fi
if grep -E '^<[^7]>debug: ' "$j" | grep -q '^'; then
	fail "a debug line not at <7>: $(grep -E '^<[^7]>debug: ' "$j" | head -1)"
fi

# ---- JOURNAL_STREAM names another stream: not the journal ----
: > "$BK_TMP/other"
run_one "$BK_TMP/redirected.log" 2 "$(stat -c %d:%i "$BK_TMP/other")"
# ---- no JOURNAL_STREAM (a terminal, a test): unchanged ----
run_one "$BK_TMP/plain.log" 3 ""
# ---- stderr is the journal, with --log-file: the file keeps its format ----
: > "$BK_TMP/journal2"
run_one "$BK_TMP/journal2" 4 "$(stat -c %d:%i "$BK_TMP/journal2")" --log-file="$BK_TMP/file.log"
for n in 2:redirected 3:plain 4:file; do
	f=$BK_TMP/${n#*:}.log
	# log_lines: fails unless every line starts with the time
	log_lines "$f" | grep -q "^blkbackd: error: vbd $F/${n%%:*}: params: unknown storage driver" ||
		fail "no \"TIME blkbackd: error: vbd $F/${n%%:*}: ...\" line in $f"
	if grep -q '^<[0-9]>' "$f"; then
		fail "a priority prefix in $f: $(grep '^<[0-9]>' "$f" | head -1)"
	fi
done
[ ! -s "$BK_TMP/journal2" ] || fail "with --log-file, lines on stderr: $(head -3 "$BK_TMP/journal2")"
exit 0
