# SPDX-License-Identifier: GPL-2.0-or-later
# lib-backend.sh: helpers for blkbackd's integration tests.
# Source after functions.sh and start_xensim:
#   . ./functions.sh; . "$abs_top_srcdir/tests/lib-backend.sh"
#
#   start_backend [ARGS...]   start blkbackd -f --transport=sim (+ $BK_BACKEND_ARGS
#                             + ARGS) with
#                             a pidfile, a log ($BACKEND_LOG) and a trace
#                             ($BACKEND_TRACE) in $BK_TMP; killed quietly at
#                             exit if the test did not stop it
#   stop_backend [SIG]        SIGTERM (or SIG) now; fail unless it exits 0
#                             in 30 s (every test ends with it: clean
#                             shutdown is tested everywhere)
#   bk_be FRONTID [DEVID]     the backend directory of a vbd
#   add_vbd FRONTID DEVID PARAMS [KEY=VALUE...]
#                             what the toolstack writes (one transaction):
#                             backend keys + extra knobs, state=1
#   log_lines                 $BACKEND_LOG without the timestamps (and fail
#                             unless every line starts with one)
#   xs_wait PATH VALUE [SECS] wait until PATH reads VALUE (default 10 s)
#   xs_is PATH VALUE          fail unless PATH reads exactly VALUE
#   xs_absent PATH            fail unless PATH does not exist
#   need_frontend             skip (77) unless blkfront-test can run scripts
#   xs_record FILE            record every xenstore change under
#                             /local/domain from now on, in order, in FILE
#   xs_count FILE PATH        how many changes at or below PATH FILE shows
#   xs_mark FILE              wait until FILE shows every change made so far
#   be_writes_before_fe FILE DOM [DEVID]
#                             how many writes to the vbd's backend state
#                             FILE recorded before the frontend's first
#                             state write there (all, if none)
#   served_by DOM PID [AFTER] every queue of the vbd has its event channel
#                             bound and its ring mapped by process PID
#                             (xensim's tables), bound after AFTER
#   bound_since DOM           xensim's port change count at which the
#                             vbd's last queue was bound (for AFTER)
#   bk_holds DOM              "MAPS PORTS": DOM's grants blkbackd maps and
#                             dom0 ports it binds to DOM (xensim's tables)
#   bk_forgot DOM             blkbackd holds no grant and no port of DOM
#   bk_sync                   a point by which blkbackd's control thread
#                             has carried out everything before it
#   verify_read_all OUT BLOCKS [WHAT]
#                             fail (saying WHAT) unless OUT, the output of a
#                             blkfront-test verify, says ok with all BLOCKS
#                             blocks of its region read back
#
# The disks of the hostile-request tests (test-case-C*.sh) come from
# new_disk, so that "make check-ceph" runs the same tests on RBD images:
#   BK_IO_ENGINE              "" (blkbackd's default, auto), libaio or
#                             io_uring: every blkbackd gets --io-engine=
#   BK_STORE                  "" (default: files and memory stores) or rbd
#                             (then CEPH_CONF and CEPH_POOL name a cluster)
#   new_disk SIZE [memory]    a fresh zeroed disk of SIZE (truncate's
#                             units): sets params (for add_disk) and img (a
#                             file, or POOL/IMAGE); "memory": memory:SIZE
#                             unless BK_STORE=rbd
#   backing_dd SKIP COUNT     COUNT 512-byte sectors of img from SKIP, on
#                             stdout (rbd: through rbd export)
#   H_READ H_WRITE H_FLUSH H_DISCARD
#                             the host actions of the store in the trace
#   H_BARRIER_FUA H_FUA_BIT   a barrier with data: its host actions after
#                             the drain, and the fua= of its trace line

BK_TMP=$(mktemp -d /tmp/bk-test.XXXXXX)
# the hotplug script reads the host's /etc/blkbackd/disks: never in tests
export BLKBACKD_DISKS=$BK_TMP/no-disks-file
BK_STORE=${BK_STORE:-}
if [ "$BK_STORE" = rbd ]; then
	H_READ=rbd_aio_readv H_WRITE=rbd_aio_writev H_FLUSH=rbd_aio_flush
	H_DISCARD=rbd_aio_discard
	# librbd's cache is writeback: FUA is a write and a flush
	H_BARRIER_FUA=$H_FLUSH,$H_WRITE,$H_FLUSH H_FUA_BIT=0
else
	H_READ=preadv H_WRITE=pwritev H_FLUSH=fdatasync H_DISCARD=fallocate-punch-hole
	H_BARRIER_FUA=fdatasync,pwritev+RWF_DSYNC H_FUA_BIT=1
fi
[ -n "${BK_KEEP:-}" ] || cleanup_fn rm -rf "$BK_TMP"
BACKEND_PIDFILE=$BK_TMP/blkbackd.pid
BACKEND_LOG=$BK_TMP/blkbackd.log
BACKEND_TRACE=$BK_TMP/trace
: > "$BK_TMP/bk-pids"
_bk_show_log() {
	if [ -s "$BACKEND_LOG" ]; then
		echo "---- blkbackd log ----"
		cat "$BACKEND_LOG"
	fi
}
cleanup_fn _bk_show_log
_backend_running=

start_backend() {
	requires test -x "$abs_top_builddir/sim/xensim"
	# BK_BACKEND_ARGS: options for every blkbackd a test starts (the
	# hostile cases run again with --feature-persistent=0 that way)
	# BK_IO_ENGINE: the file stores' engine (--io-engine; test-case-libaio
	# reruns the cases with libaio, the default picks io_uring here)
	start_daemon -P "$BACKEND_PIDFILE" blkbackd -f --transport=sim --pidfile="$BACKEND_PIDFILE" \
		--sim-dir="$XENSIM_DIR" --trace="$BACKEND_TRACE" \
		${BK_IO_ENGINE:+--io-engine=$BK_IO_ENGINE} ${BK_BACKEND_ARGS:-} "$@" \
		2>>"$BACKEND_LOG"
	_backend_running=1
	# every blkbackd this test ran, for the writes xensim records by pid
	cat "$BACKEND_PIDFILE" >> "$BK_TMP/bk-pids"
}

stop_backend() {
	local pid rc=0 sig=${1:-TERM}
	pid=$(cat "$BACKEND_PIDFILE") || fail "stop_backend: no pidfile"
	_backend_running=
	kill -"$sig" "$pid" 2>/dev/null || fail "blkbackd ($pid) is already gone"
	# wait for our child and its exit status when we can, else poll
	if wait "$pid" 2>/dev/null; then rc=0; else rc=$?; fi
	for (( i=0; i<300; i++ )); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		fail "blkbackd did not exit within 30 s of SIG$sig"
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 127 ]; then
		echo "---- blkbackd log ----"; cat "$BACKEND_LOG"
		fail "blkbackd exited with status $rc after SIG$sig"
	fi
}

# ISO-8601, local time with microseconds and the offset (blkbackd.8 LOG)
BK_STAMP_RE='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}[+-][0-9]{2}:[0-9]{2}'
log_lines() {
	local f=${1:-$BACKEND_LOG}
	if grep -Ev "^$BK_STAMP_RE blkbackd: " "$f" | grep -q '^'; then
		grep -Ev "^$BK_STAMP_RE blkbackd: " "$f" | head -5 >&2
		fail "lines without a timestamp in $f"
	fi
	sed -E "s/^$BK_STAMP_RE //" "$f"
}

bk_be() {
	echo "/local/domain/0/backend/vbd/$1/${2:-51712}"
}

add_vbd() {
	local f=$1 d=$2 params=$3 be fe kv args=()
	shift 3
	be=$(bk_be "$f" "$d")
	fe=/local/domain/$f/device/vbd/$d
	for kv in "$@"; do
		args+=("$be/${kv%%=*}" "${kv#*=}")
	done
	xenstore-write "$be/frontend" "$fe" "$be/frontend-id" "$f" \
		"$be/params" "$params" "$be/mode" w "$be/online" 1 \
		"${args[@]}" "$be/state" 1
}

xs_wait() {
	local path=$1 want=$2 secs=${3:-10}
	wait_for "$secs" _xs_eq "$path" "$want" ||
		fail "$path is \"$(xenstore-read "$path" 2>/dev/null || echo '<absent>')\", expected \"$want\" (waited $secs s)"
}

_xs_eq() {
	[ "$(xenstore-read "$1" 2>/dev/null)" = "$2" ]
}

xs_is() {
	local got
	got=$(xenstore-read "$1" 2>/dev/null) || fail "$1 is absent, expected \"$2\""
	[ "$got" = "$2" ] || fail "$1 is \"$got\", expected \"$2\""
}

xs_absent() {
	if xenstore-read "$1" >/dev/null 2>&1; then
		fail "$1 exists (\"$(xenstore-read "$1")\"), expected absent"
	fi
}

need_frontend() {
	requires test -x "$abs_top_builddir/frontend-test/blkfront-test"
	if ! blkfront-test --help 2>&1 | grep -q script; then
		echo "$0: skipped: blkfront-test has no script mode yet"
		exit 77
	fi
}

# verify's last act, at --count or at a stop signal, is a byte-exact read
# of its whole region; the kill and restart tests rest on it, so they
# check it ran to the end rather than trust a bare "ok".
verify_read_all() {
	local n
	n=$(sed -n 's/^verify: ok: .* \([0-9]*\) blocks of [0-9]* bytes read back;.*/\1/p' "$1")
	[ "$n" = "$2" ] || {
		tail -n 20 "$1" >&2
		fail "${3:+$3: }verify read back ${n:-no} blocks, not all $2 of its region"
	}
}

# verify_stop PID OUT BLOCKS: the background verify PID (output in OUT)
# is still running; stop it (SIGINT) and require it to end ok, having
# read back all BLOCKS blocks of its region byte-exact.
verify_stop() {
	local pid=$1 out=$2 blocks=$3
	kill -0 "$pid" 2>/dev/null || { tail -n 20 "$out"; fail "the guest's verify stopped"; }
	kill -INT "$pid"
	wait "$pid" || { tail -n 20 "$out"; fail "the guest's verify failed"; }
	grep -qE "^verify: ok: [0-9]+ writes acknowledged" "$out" ||
		{ tail -n 20 "$out"; fail "the guest's verify did not end ok"; }
	verify_read_all "$out" "$blocks"
}

# ---- observers outside blkbackd (DESIGN-NOTES "How the tests observe") ----

# xs_record FILE: every change under /local/domain from now on, one path
# per line, in the order xensim made them (one xenstore-watch, one
# connection: its events keep that order); the first line is the
# watch's initial event.  Returns once the watch is set; killed at exit.
xs_record() {
	xenstore-watch /local/domain > "$1" 2>&1 &
	cleanup_fn kill $!
	wait_for 10 test -s "$1" || fail "xenstore-watch did not start"
}

# xs_count FILE PATH: how many changes at or below PATH FILE (xs_record)
# shows, its initial event left out.
xs_count() {
	awk -v p="$2" 'NR > 1 && ($1 == p || index($1, p "/") == 1) { n++ } END { print n + 0 }' "$1"
}

# xs_mark FILE: a write of the test's own (/local/domain/0/xs-mark-N,
# new each time), and a wait until FILE (xs_record) shows it: every
# change xensim made before it is in FILE by then, however late
# xenstore-watch is.
_xs_marks=0
xs_mark() {
	_xs_marks=$((_xs_marks + 1))
	xenstore-write /local/domain/0/xs-mark-$_xs_marks 1
	wait_for 30 grep -qFx /local/domain/0/xs-mark-$_xs_marks "$1" ||
		fail "xs_mark: $1 never showed mark $_xs_marks"
}

# be_writes_before_fe FILE DOM [DEVID]: how many writes to the vbd's
# backend state node FILE (xs_record) shows before the first write to
# its frontend's state node (every one of them if there is none): what
# the guest could have seen of the backend while it did nothing itself.
be_writes_before_fe() {
	local be fe
	be=$(bk_be "$2" "${3:-51712}")/state fe=/local/domain/$2/device/vbd/${3:-51712}/state
	awk -v be="$be" -v fe="$fe" 'NR > 1 && $1 == fe { exit } NR > 1 && $1 == be { n++ }
		END { print n + 0 }' "$1"
}

# _vbd_rings DOM: "EVTCHN RINGREF" per queue of DOM's xvda, from the
# frontend's keys (queue-N/ with multi-queue, ring-ref0 with a
# multi-page ring).
_vbd_rings() {
	local fe=/local/domain/$1/device/vbd/51712 q dirs=() ref
	if xenstore-read "$fe/multi-queue-num-queues" >/dev/null 2>&1; then
		for (( q = 0; q < $(xenstore-read "$fe/multi-queue-num-queues"); q++ )); do
			dirs+=("$fe/queue-$q")
		done
	else
		dirs=("$fe")
	fi
	for q in "${dirs[@]}"; do
		ref=$(xenstore-read "$q/ring-ref" 2>/dev/null || xenstore-read "$q/ring-ref0") || return 1
		echo "$(xenstore-read "$q/event-channel") $ref"
	done
}

# _dom0_port DOM PORT: xensim's line for the dom0 port the guest's PORT
# is connected to ("" unless it is): "P interdomain remote=... pid=..."
_dom0_port() {
	local p
	p=$(xensim-ctl evtchn "$1" | awk -v p="$2" '$1 == p && $2 == "interdomain" {
		sub(/^remote=0:/, "", $3); print $3 }')
	[ -n "$p" ] || return 0
	xensim-ctl evtchn 0 | awk -v p="$p" -v d="$1" '$1 == p && $3 ~ "^remote=" d ":"'
}

# served_by DOM PID [AFTER]: each queue of DOM's xvda has its event
# channel bound, on dom0's side, through process PID -- bound after
# xensim's AFTERth port change when given -- and its ring page mapped by
# PID, as xensim's port table and pin ledgers show.  A takeover as the
# hypervisor sees it; the guest's I/O shows it served.
served_by() {
	local dom=$1 pid=$2 after=${3:-0} evt ref line since
	_vbd_rings "$dom" > "$BK_TMP/rings" || return 1
	[ -s "$BK_TMP/rings" ] || return 1
	while read -r evt ref; do
		line=$(_dom0_port "$dom" "$evt")
		[[ " $line " == *" pid=$pid "* ]] || return 1
		since=${line##*since=}
		[ "$since" -gt "$after" ] || return 1
		xensim-ctl maps "$dom" | grep -q "^$ref pid=$pid " || return 1
	done < "$BK_TMP/rings"
}

# bound_since DOM: the latest xensim port change count at which a queue
# of DOM's xvda was bound on dom0's side (for served_by's AFTER).
bound_since() {
	local evt ref line max=0 since
	_vbd_rings "$1" > "$BK_TMP/rings" || fail "vbd $1: no ring keys"
	while read -r evt ref; do
		line=$(_dom0_port "$1" "$evt")
		[ -n "$line" ] || fail "vbd $1: event channel $evt is not bound"
		since=${line##*since=}
		[ "$since" -le "$max" ] || max=$since
	done < "$BK_TMP/rings"
	echo "$max"
}

# bk_holds DOM: what blkbackd holds of domain DOM as xensim sees it,
# "MAPS PORTS": pins on DOM's grants in blkbackd's pin ledger, and dom0
# ports bound through blkbackd connected or offered to DOM.  "0 0" once
# it disconnected every vbd of DOM (or DOM is gone).
bk_holds() {
	local pid
	pid=$(bk_pid)
	echo "$(xensim-ctl maps "$1" 2>/dev/null | grep -c " pid=$pid " || true)" \
		"$(xensim-ctl evtchn 0 | grep -cE "^[0-9]+ [a-z]+ remote=$1:[0-9]+ pid=$pid " || true)"
}

# bk_forgot DOM: blkbackd holds nothing of DOM's any more that a vbd
# holds: bk_holds is "0 0".  What "the vbd is forgotten" means to the
# guest and the hypervisor.  (The domain's memory files stay open while
# the domain lives, vbd or not: xenops keeps them per domain; dom_maps
# goes to 0 once the domain is destroyed.)
bk_forgot() {
	[ "$(bk_holds "$1")" = "0 0" ]
}

# bk_sync: a point by which blkbackd's control thread has carried out
# all it had to do before (a takeover, a watch event): a new vbd of a
# fresh guest (memory:1M), which the control thread probes after what
# came before it, reaches InitWait.  Its xenstore write comes after all
# the earlier ones, so an xs_record FILE that shows it shows them too:
# bk_sync FILE waits for that.  The vbd is removed again.
_bk_syncs=0
bk_sync() {
	local rec=${1:-} sdom sbe
	_bk_syncs=$((_bk_syncs + 1))
	[ -n "${_bk_sync_dom:-}" ] || _bk_sync_dom=$(create_domain "sync-$$") ||
		fail "bk_sync: no domain"
	sdom=$_bk_sync_dom
	sbe=$(bk_be "$sdom" "$_bk_syncs")
	add_vbd "$sdom" "$_bk_syncs" memory:1M
	xs_wait "$sbe/state" 2 60
	# the toolstack's state write, then blkbackd's
	[ -z "$rec" ] || wait_for 30 eval '[ "$(grep -cFx "$sbe/state" "$rec")" -ge 2 ]' ||
		fail "bk_sync: $rec never showed blkbackd's InitWait of $sbe"
	xenstore-rm "$sbe"
}

# start_sim_backend [BLKBACKD-OPTION]...: how a ring test starts: skip
# without xensim or blkfront-test, then start xensim and blkbackd.
start_sim_backend() {
	requires test -x "$abs_top_builddir/sim/xensim"
	need_frontend
	start_xensim
	start_backend "$@"
}

# guest_with_disk SIZE: a new guest (DOM) whose xvda is new_disk SIZE
# (a new sparse file of SIZE bytes, truncate's units, $img).
guest_with_disk() {
	new_disk "$1"
	new_guest
	add_disk $DOM "$params"
}

_bk_disks=0
new_disk() {
	local size=$1 kind=${2:-file}
	if [ "$BK_STORE" = rbd ]; then
		_bk_disks=$((_bk_disks + 1))
		img=$CEPH_POOL/t$$-$_bk_disks
		# images are thin: a new one reads as zeroes
		timeout 120 rbd -c "$CEPH_CONF" create --size "$size" \
			"$img" || fail "rbd create $img failed"
		cleanup_fn _rbd_rm "$img"
		params="rbd:$img:conf=$CEPH_CONF"
	elif [ "$kind" = memory ]; then
		img= params=memory:$size
	else
		img=$BK_TMP/disk.img
		rm -f "$img"
		truncate -s "$size" "$img" || fail "truncate -s $size $img failed"
		params=$img
	fi
}

# (at exit: a daemon killed with SIGKILL may still hold its lock; rm
# does not need it, but give the cluster a few tries)
_rbd_rm() {
	local i
	for i in 1 2 3; do
		timeout 60 rbd -c "$CEPH_CONF" rm --no-progress "$1" >/dev/null 2>&1 && return 0
		sleep 1
	done
}

backing_dd() {
	if [ "$BK_STORE" = rbd ]; then
		timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" - 2>/dev/null |
			dd bs=512 skip="$1" count="$2" iflag=fullblock status=none
	else
		dd if="$img" bs=512 skip="$1" count="$2" status=none
	fi
}

# new_guest: create a simulated domU; sets DOM.
_bk_guests=0
new_guest() {
	# unique in this test's xensim: $RANDOM alone repeats (xensim refuses
	# a second domain of the same name) once a test makes a few dozen
	_bk_guests=$((_bk_guests + 1))
	DOM=$(create_domain "guest$_bk_guests-$RANDOM")
	[ -n "$DOM" ] || fail "xensim-ctl create-domain failed"
}

# frozen_guest: a new guest (DOM; fe, be its vbd's directories) whose
# memory:1M xvda is Connected on both ends, its frontend (HOLD, a
# blkfront-test attach --hold) then stopped: a guest that cannot react,
# whose state steps the test writes itself.  Killed at exit.
frozen_guest() {
	new_guest
	fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
	add_disk $DOM memory:1M
	blkfront-test attach --domid $DOM --hold > "$BK_TMP/hold.$DOM" 2>&1 &
	HOLD=$!
	cleanup_fn kill -KILL $HOLD
	xs_wait $be/state 4
	xs_wait $fe/state 4
	kill -STOP $HOLD
}

# add_disk DOMID PARAMS [--be-key K=V]... : a vbd as xl creates it (xvda).
add_disk() {
	local dom=$1 params=$2
	shift 2
	blkfront-test xl-add --domid "$dom" --params "$params" "$@" >/dev/null ||
		fail "blkfront-test xl-add failed"
}

# run_script DOMID FILE [blkfront-test options]: fail unless it passes.
# (--max-indirect 16 keeps the frontend's shared data pool at 512 pages;
# raw requests may still carry more segments.)
run_script() {
	local dom=$1 file=$2
	shift 2
	blkfront-test script --domid "$dom" --max-indirect 16 "$@" "$file" ||
		fail "script $file failed (exit $?)"
}

# writes_in_flight DOM N [script options]: a guest script on DOM's xvda
# sends N one-page writes at once (id i, sector 8*i, data seed:i) and
# waits for every answer to be OKAY.  It runs in the background as
# $front (killed at cleanup; output in $BK_TMP/w$DOM.out); returns once
# blkbackd has taken the first write (the trace).  For a store slow per
# request (delay-ms), this leaves N requests in flight.
writes_in_flight() {
	local dom=$1 n=$2 i
	shift 2
	{
		for i in $(seq 1 $n); do
			echo "fill p$i seed:$i"
			echo "send op=write id=$i sector=$((i * 8)) seg=p$i nopush"
		done
		echo "push"
		echo "wait-all status=OKAY timeout=$(( (n + 5) * 2000 ))"
	} > "$BK_TMP/w$dom"
	blkfront-test script --domid $dom --max-indirect 16 "$@" "$BK_TMP/w$dom" \
		> "$BK_TMP/w$dom.out" 2>&1 &
	front=$!
	cleanup_fn kill $front
	wait_for 10 grep -q "vbd=$dom/51712 ring=0 id=1 issue=write" "$BACKEND_TRACE" ||
		fail "vbd $dom: the writes never reached blkbackd"
}

# writes_answered DOM N [STATUS [HOST]]: blkbackd's trace shows every one
# of writes_in_flight's N writes on DOM answered with STATUS (a regular
# expression; default 0, OKAY), after host action HOST when given.
writes_answered() {
	local dom=$1 n=$2 want=${3:-0} host=${4:-} i
	for i in $(seq 1 $n); do
		grep -Eq "vbd=$dom/51712 ring=0 op=write id=$i .*${host:+host=$host }status=$want( |\$)" \
			"$BACKEND_TRACE" || return 1
	done
}

# io_works DOM [blkfront-test script option]...: DOM's xvda writes one
# block and reads it back byte-exact; fails otherwise.
io_works() {
	local dom=$1
	shift
	cat > "$BK_TMP/good.script" <<'EOS'
fill p0 seed:7
send op=write sector=8 seg=p0 expect=OKAY
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:7
EOS
	run_script $dom "$BK_TMP/good.script" "$@"
}

# good_device_works PARAMS [blkfront-test script option]...: io_works on
# a new guest with a disk on PARAMS.  After a hostile guest: the daemon
# still serves others.
good_device_works() {
	local params=$1
	shift
	new_guest
	add_disk $DOM "$params"
	io_works $DOM "$@"
}

# trace_of ID: the trace lines of request ID, without the t=/vbd/ring
# prefix (a line without all three keeps it, and so matches nothing).
trace_of() {
	grep -E " id=$1( |$)" "$BACKEND_TRACE" | sed -E 's/^t=[0-9]+ vbd=[^ ]+ ring=[0-9]+ //'
}

# trace_expect ID LINE...: the trace lines of ID are exactly LINE...
trace_expect() {
	local id=$1 want got
	shift
	want=$(printf '%s\n' "$@")
	got=$(trace_of "$id")
	[ "$got" = "$want" ] || {
		echo "---- expected trace of id=$id ----"; echo "$want"
		echo "---- got ----"; echo "$got"
		fail "trace of request $id differs"
	}
}

# no_host_io ID: the trace shows no host step issued for request ID.
no_host_io() {
	if trace_of "$1" | grep -q "issue="; then
		trace_of "$1"
		fail "request $1 reached the host"
	fi
}

# ---- hostile-case helpers (test-case-C16.sh ...) ----

# be_states DOM [DEVID]: the values blkbackd wrote to a vbd's backend
# state node, in order, on one line ("2 4 5 6"): every write xensim
# recorded ($XS_CHANGES) by a blkbackd this test started -- a write of
# the value already there included, as the frontend's watch sees it.
be_states() {
	local path
	path=$(bk_be "$1" "${2:-51712}")/state
	awk -v path="$path" 'FNR == NR { pid["pid=" $1] = 1; next }
		($2 in pid) && $4 == "write" && index($5, path "=") == 1 {
			printf "%s%s", n++ ? " " : "", substr($5, length(path) + 2) }
		END { print "" }' "$BK_TMP/bk-pids" "$XS_CHANGES"
}

# be_connects DOM [DEVID]: how many times blkbackd wrote Connected (4)
# to the vbd's state node (xensim's record).
be_connects() {
	be_states "$@" | tr ' ' '\n' | grep -c '^4$' || true
}

# be_states_are DOM WANT...: fail unless be_states DOM is exactly WANT.
be_states_are() {
	local dom=$1 got
	shift
	got=$(be_states "$dom")
	[ "$got" = "$*" ] || fail "vbd $dom: backend states \"$got\", expected \"$*\""
}

# bk_pid: blkbackd's pid.   bk_res [PID]: "FDS THREADS RSS_KIB" of it.
# THREADS leaves out io_uring's workers (comm "iou-wrk-N"): the kernel
# starts them for a queue's blocking operations (fsync, some buffered
# writes) and ends them after a few idle seconds, not blkbackd.
bk_pid() { cat "$BACKEND_PIDFILE"; }
bk_res() {
	local pid=${1:-$(bk_pid)}
	echo "$(ls /proc/$pid/fd | wc -l)" \
		"$(cat /proc/$pid/task/*/comm 2>/dev/null | grep -vc '^iou-wrk-')" \
		"$(awk '/^VmRSS:/ { print $2 }' /proc/$pid/status)"
}

# rss_meaningful: whether blkbackd's RSS tells of memory it keeps.  Not
# under valgrind; under ASan only where the test turned its quarantine
# off (asan_no_quarantine: freed memory otherwise waits there, up to
# 256 MiB) and the store is not rbd (librados's many short-lived threads
# each leave ASan allocator caches behind); LeakSanitizer still reports
# real leaks at exit.
asan_no_quarantine() {
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0
}
rss_meaningful() {
	[ "${BLK_VALGRIND:-}" != 1 ] || return 1
	[ "$BLK_SANITIZERS" = yes ] || return 0
	case "${ASAN_OPTIONS:-}" in *quarantine_size_mb=0*) ;; *) return 1 ;; esac
	[ "${BK_STORE:-file}" != rbd ]
}

# res_back FDS0 THREADS0 RSS0 [RSS_SLACK_KIB] [SECS]: wait until
# blkbackd's fds and threads are back to exactly the baseline and its
# RSS within the slack (default 1024 KiB) of it (RSS only where
# rss_meaningful); fail otherwise.
_res_ok() {
	local now
	read -r -a now <<< "$(bk_res)"
	[ "${now[0]}" = "$1" ] && [ "${now[1]}" = "$2" ] || return 1
	rss_meaningful || return 0
	[ $(( now[2] - $3 )) -le "$4" ] && [ $(( $3 - now[2] )) -le "$4" ]
}
res_back() {
	local fds=$1 thr=$2 rss=$3 slack=${4:-1024} secs=${5:-5}
	wait_for "$secs" _res_ok "$fds" "$thr" "$rss" "$slack" ||
		{ ls -l /proc/$(bk_pid)/fd; fail "blkbackd resources \"$(bk_res)\", baseline \"$fds $thr $rss\" (RSS +-$slack KiB)"; }
}

# dom_maps DOM: how many of blkbackd's mappings and fds are domain
# DOM's memory (xensim's memfds): 0 once nothing of DOM is held.
dom_maps() {
	local pid
	pid=$(bk_pid)
	echo $(( $(grep -c "xensim-dom$1-" /proc/$pid/maps || true) +
		 $(ls -l /proc/$pid/fd | grep -c "xensim-dom$1-" || true) ))
}

# cpu_ticks [PID]: utime + stime of blkbackd, in clock ticks.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/${1:-$(bk_pid)}/stat"
}

# fuse_file_start: tests/fuse-file serving a new 4 MiB file
# ($BK_TMP/under.img) as $BK_TMP/mnt/disk, a backing whose file system
# can be made to hang: fuse_file_stop (SIGSTOP, returns once the
# daemon is stopped) and fuse_file_cont; fuse_file_stopped says whether
# it is.  FUSE_PID, FUSE_DISK set; never left stopped at exit (its
# cleanup runs before blkbackd is killed).
fuse_file_start() {
	local mnt=$BK_TMP/mnt
	requires_root
	requires test -c /dev/fuse
	requires test -x "$abs_top_builddir/tests/fuse-file"
	truncate -s 4M "$BK_TMP/under.img"
	mkdir "$mnt"
	"$abs_top_builddir/tests/fuse-file" "$BK_TMP/under.img" "$mnt" 2>"$BK_TMP/fuse.log" &
	FUSE_PID=$!
	FUSE_DISK=$mnt/disk
	cleanup_fn _fuse_file_gone
	wait_for 10 test -e "$FUSE_DISK" || { cat "$BK_TMP/fuse.log"; fail "fuse-file did not mount"; }
}
_fuse_file_gone() {
	kill -CONT $FUSE_PID
	kill $FUSE_PID
	sleep 0.3
	umount -l "$BK_TMP/mnt" 2>/dev/null
}
fuse_file_stopped() { [ "$(awk '{ print $3 }' /proc/$FUSE_PID/stat)" = T ]; }
# the stop takes effect when the process next runs: on a busy machine
# (make -j2 check under ASan) not always before the next line
fuse_file_stop() {
	kill -STOP $FUSE_PID
	wait_for 10 fuse_file_stopped || fail "fuse-file did not stop"
}
fuse_file_cont() { kill -CONT $FUSE_PID; }
