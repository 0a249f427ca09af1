#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C26: the domain is destroyed and its vbd removed (as xl destroy does)
# mid-handshake:
#  1. blkbackd InitWait, the frontend Initialising;
#  2. the frontend Initialised before blkbackd acted (held with SIGSTOP,
#     destroyed, SIGCONT);
#  3. right after Connected, with requests in flight (200 ms each).
# Each time: the vbd is forgotten, nothing of the domain is mapped or
# open in blkbackd (grants, ring, event channel, its memory files), the
# backing file is closed (the time it took is printed: the case's 1 s
# is a latency goal; the test bounds it at 10 s, as liveness, since a
# shared machine under ASan can miss any tight stopwatch); the removed
# directory is never recreated; the same backing attaches to a new domain at once and
# connects; another guest's I/O goes on throughout (each answer < 1 s).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 4M
X=$img

new_guest; G=$DOM
add_disk $G memory:4M
{
	echo "xs-expect fe go 1 timeout=30000"
	for i in $(seq 1 2000); do
		echo "fill p1 seed:$i"
		echo "send op=write sector=$(( (i % 64) * 8 )) seg=p1 expect=OKAY timeout=1000"
		echo "send op=read sector=$(( (i % 64) * 8 )) seg=p2 expect=OKAY timeout=1000"
		echo "check p2 seed:$i"
		echo "sleep 5"
	done
} > "$BK_TMP/g"
blkfront-test script --domid $G --max-indirect 16 "$BK_TMP/g" > "$BK_TMP/g.out" 2>&1 &
fg=$!
cleanup_fn kill $fg
xs_wait "$(bk_be $G)/state" 4
xenstore-write /local/domain/$G/device/vbd/51712/go 1

x_open() { ls -l /proc/$(bk_pid)/fd | grep -qF -- "-> $X"; }
gone() { # dom: forgotten (xensim: no grant, no port), nothing of it held, the backing closed
	bk_forgot $1 && [ "$(dom_maps $1)" = 0 ] && ! x_open
}
destroyed() { # dom what: destroy, remove the vbd, all released
	local t0=$EPOCHREALTIME
	destroy_domain $1
	xenstore-rm "$(bk_be $1)"
	[ -n "${2:-}" ] && kill -CONT "$(bk_pid)"
	wait_for 10 gone $1 ||
		{ ls -l /proc/$(bk_pid)/fd; grep -c "xensim-dom$1-" /proc/$(bk_pid)/maps || true
		  fail "vbd $1: not all released within 10 s"; }
	echo "vbd $1: all released $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { printf "%.2f", b - a }') s after the destroy"
	bk_sync	# blkbackd has handled the removal
	xs_absent "$(bk_be $1)"
	grep "vbd $1/51712: " "$BACKEND_LOG" | tail -3
}
attaches_again() {
	new_guest
	add_disk $DOM "$params"
	io_works $DOM
}

# 1.
new_guest; D=$DOM
add_disk $D "$params"
xs_wait "$(bk_be $D)/state" 2
destroyed $D
attaches_again

# 2.
new_guest; D=$DOM
add_disk $D "$params"
xs_wait "$(bk_be $D)/state" 2
kill -STOP "$(bk_pid)"
cleanup_fn kill -CONT "$(bk_pid)"
blkfront-test script --domid $D --max-indirect 16 --timeout 60000 /dev/null \
	> "$BK_TMP/d2.out" 2>&1 &
f2=$!
cleanup_fn kill $f2
xs_wait /local/domain/$D/device/vbd/51712/state 3
destroyed $D cont
kill $f2 2>/dev/null || true
! grep -q "vbd $D/51712: .*-> Connected" "$BACKEND_LOG" || echo "2: it connected first"
attaches_again

# 3.
new_guest; D=$DOM
add_disk $D memory:4M,delay-ms=200
writes_in_flight $D 3 --no-close
destroyed $D
writes_answered $D 3 '(0|-1)' || fail "3: the writes in flight were not all answered"
kill $front 2>/dev/null || true

wait $fg || { cat "$BK_TMP/g.out"; fail "the other guest's I/O failed"; }
stop_backend
exit 0
