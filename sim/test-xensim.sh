#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xensim with the real xenstore-* tools (Debian's xenstore-utils), the
# domain life cycle through xensim-ctl, then libxenstore from C
# (test-xstore-libxs).  Every value is compared exactly.
. "${top_builddir:-..}/tests/functions.sh"

requires command -v xenstore-ls xenstore-read xenstore-write xenstore-watch xenstore-chmod xenstore-rm xenstore-list xenstore-exists
requires test -x ./test-xstore-libxs

start_xensim
out=$XENSIM_DIR/out

expect() {	# expect "WANTED" CMD...: stdout of CMD must be WANTED
	local want=$1 got
	shift
	got=$("$@") || fail "$*: exit status $?"
	[ "$got" = "$want" ] || fail "$*: got '$got', wanted '$want'"
}

# --- dom0 round trips with the tools
expect "" xenstore-write /t/a hello /t/b/c world
expect hello xenstore-read /t/a
expect world xenstore-read /t/b/c
expect "$(printf 'a\nb')" xenstore-list /t
expect "" xenstore-exists /t/b
expect "$(printf 'a = "hello"\nb = ""\n c = "world"')" xenstore-ls /t
expect "" xenstore-rm /t/b
! xenstore-exists /t/b/c 2>/dev/null || fail "/t/b/c survived xenstore-rm /t/b"
! xenstore-read /nope 2>/dev/null || fail "xenstore-read of a missing node succeeded"
expect "" xenstore-chmod /t/a n0 r5
ls_p() {	# xenstore-ls -p without the dot leaders
	xenstore-ls -p "$@" | sed 's/"  *[. ]*(/" (/'
}
expect 'a = "hello" (n0,r5)' ls_p /t
expect "$(printf 'local = ""\n domain = ""\n  0 = ""\n   name = "Domain-0"\n   domid = "0"\nt = ""\n a = "hello"')" \
	xenstore-ls

# --- watches: the initial event, then one per change
xenstore-watch -n 3 /w > "$out.watch" 2>&1 &
watcher=$!
wait_for 10 grep -qx /w "$out.watch" || fail "no initial watch event"
xenstore-write /w/a 1
xenstore-write /elsewhere 1
xenstore-write /w/b 2
wait $watcher || fail "xenstore-watch exited with $?"
expect "$(printf '/w\n/w/a\n/w/b')" cat "$out.watch"

# --- domains
expect 1 create_domain guest1
expect 2 create_domain guest2
expect "$(printf '0 Domain-0\n1 guest1\n2 guest2')" xensim-ctl --dir "$XENSIM_DIR" list
expect guest1 xenstore-read /local/domain/1/name
expect 1 xenstore-read /local/domain/1/domid
expect "$(printf '1 = "" (n0,r1)\n name = "guest1" (n0,r1)\n domid = "1" (n0,r1)')" \
	bash -c "$(declare -f ls_p); ls_p /local/domain | grep -A2 '^1 = '"
test -S "$XENSIM_DIR/dom1/xenstore.sock" || fail "no dom1/xenstore.sock"
! xensim-ctl --dir "$XENSIM_DIR" create-domain guest1 2>/dev/null || fail "duplicate name accepted"
! xensim-ctl --dir "$XENSIM_DIR" create-domain "bad name" 2>/dev/null || fail "bad name accepted"
! xensim-ctl --dir "$XENSIM_DIR" destroy-domain 0 2>/dev/null || fail "dom0 destroyed"
! xensim-ctl --dir "$XENSIM_DIR" destroy-domain 99 2>/dev/null || fail "domain 99 destroyed"

# a domU through its own socket: its nodes yes, dom0's and others' no
U1="$XENSIM_DIR/dom1/xenstore.sock"
expect guest1 as_domain 1 xenstore-read name
expect "" as_domain 1 xenstore-write data/x 42
expect 42 xenstore-read /local/domain/1/data/x
! env XENSTORED_PATH="$U1" xenstore-read /local/domain/0/name 2>/dev/null || fail "domU read dom0's name"
! env XENSTORED_PATH="$U1" xenstore-write /local/domain/2/data/x 1 2>/dev/null || fail "domU wrote domain 2's node"
! env XENSTORED_PATH="$U1" xenstore-ls /local/domain/2 >/dev/null 2>&1 || fail "domU listed domain 2"

# destroy: @releaseDomain, subtree and directory gone
xenstore-watch -n 2 @releaseDomain > "$out.rel" 2>&1 &
watcher=$!
wait_for 10 grep -qx @releaseDomain "$out.rel" || fail "no initial @releaseDomain event"
expect "" destroy_domain 1
wait $watcher || fail "xenstore-watch @releaseDomain exited with $?"
expect "$(printf '@releaseDomain\n@releaseDomain')" cat "$out.rel"
! xenstore-exists /local/domain/1 || fail "/local/domain/1 survived destroy"
test ! -e "$XENSIM_DIR/dom1" || fail "$XENSIM_DIR/dom1 survived destroy"
expect "$(printf '0 Domain-0\n2 guest2')" xensim-ctl --dir "$XENSIM_DIR" list

# --- --xs-changes (start_xensim's $XS_CHANGES): every change in order,
# with the writer's pid and domain; bytes outside printable ASCII escaped
xenstore-write /r/v 'a\\b' /r/w "$(printf 'a\tc')"	# (xenstore-write unescapes: a\b)
xenstore-rm /r
expect "$(printf '%s\n' 'dom=0 write /t/a=hello' 'dom=0 write /t/b/c=world' 'dom=0 rm /t/b' \
	'dom=1 write /local/domain/1/data/x=42' 'dom=0 write /r/v=a\x5cb' 'dom=0 write /r/w=a\x09c' 'dom=0 rm /r')" \
	sed -nE 's#^[0-9]+ pid=[1-9][0-9]* (dom=[0-9]+ (write|rm) (/t[/=]|/r|/local/domain/1/data/x).*)#\1#p' "$XS_CHANGES"
# generations rise, line by line
awk '$1 <= last { exit 1 } { last = $1 }' "$XS_CHANGES" || fail "generations out of order in $XS_CHANGES"

# --- libxenstore from C
./test-xstore-libxs || fail "test-xstore-libxs"
