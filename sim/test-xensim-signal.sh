#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM and SIGINT stop xensim cleanly: exit status 0, every socket and
# domain directory removed.  --daemon returns once xensim serves.
. "${top_builddir:-..}/tests/functions.sh"

dir=$(mktemp -d /tmp/xensim-sig.XXXXXX)
cleanup_fn rm -rf "$dir"
# Processes of ours still running (never kill a pid that was reaped).
live=()
kill_live() { local p; for p in "${live[@]}"; do kill -9 "$p" 2>/dev/null; done; }
unlive() { local p keep=(); for p in "${live[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; live=("${keep[@]}"); }
cleanup_fn kill_live

for sig in TERM INT; do
	rm -f "$dir/pid"
	xensim --dir "$dir" --pidfile "$dir/pid" 2>"$dir/log" &
	pid=$!
	live+=("$pid")
	wait_for 30 test -s "$dir/pid" || fail "no pidfile"
	[ "$(cat "$dir/pid")" = "$pid" ] || fail "pidfile holds $(cat "$dir/pid"), not $pid"
	test -S "$dir/xenstore.sock" && test -S "$dir/ctl.sock" || fail "sockets missing once the pidfile exists"
	[ "$(xensim-ctl --dir "$dir" create-domain g)" = 1 ] || fail "create-domain"
	# a second xensim on the same directory refuses to steal it
	! xensim --dir "$dir" 2>"$dir/log2" || fail "second xensim on $dir started"
	grep -q "another xensim is serving it" "$dir/log2" || fail "second xensim: $(cat "$dir/log2")"
	[ "$(XENSTORED_PATH="$dir/xenstore.sock" xenstore-read /local/domain/1/name)" = g ] || fail "first xensim disturbed"
	for f in xenstore.sock ctl.sock hv.sock dom1/xenstore.sock; do
		test -S "$dir/$f" || fail "second xensim removed $f"
	done
	test -S "$dir/dom1/xenstore.sock" || fail "no dom1 socket"
	# a client still connected does not hold the shutdown up
	XENSTORED_PATH="$dir/xenstore.sock" xenstore-watch /x >/dev/null 2>&1 &
	holder=$!
	live+=("$holder")
	sleep 0.2
	kill -$sig "$pid"
	rc=0
	wait "$pid" || rc=$?
	unlive "$pid"
	[ "$rc" = 0 ] || { cat "$dir/log"; fail "SIG$sig: exit status $rc"; }
	for f in xenstore.sock ctl.sock dom1 pid; do
		test ! -e "$dir/$f" || fail "SIG$sig: $dir/$f left behind"
	done
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	unlive "$holder"
done

# --daemon: the parent exits 0 once the child serves
xensim --daemon --dir "$dir" --pidfile "$dir/pid" 2>"$dir/log" || fail "xensim --daemon: exit $?"
pid=$(cat "$dir/pid") || fail "--daemon: no pidfile"
live+=("$pid")
test -S "$dir/xenstore.sock" || fail "--daemon: not listening"
[ "$(XENSTORED_PATH="$dir/xenstore.sock" xenstore-read /local/domain/0/name)" = Domain-0 ] || fail "--daemon: not serving"
kill -TERM "$pid"
wait_for 30 bash -c "! kill -0 $pid 2>/dev/null" || fail "--daemon: still alive after SIGTERM"
unlive "$pid"
test ! -e "$dir/xenstore.sock" || fail "--daemon: socket left behind"

# bad usage: exit 1 with a message
! xensim 2>/dev/null || fail "xensim without --dir succeeded"
! xensim --dir "$dir" extra 2>/dev/null || fail "xensim with an extra argument succeeded"
