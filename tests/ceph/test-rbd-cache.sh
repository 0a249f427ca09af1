#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Flush semantics on RBD: with librbd's cache on (writeback, or
# Pacific's default writearound: writes acknowledged before the OSDs
# have them) the store has a volatile cache, so flush-mode=auto
# advertises feature-flush-cache=1 and a FLUSH is rbd_aio_flush; with it
# off (cache=writethrough, or rbd_cache=false / rbd_cache_policy=
# writethrough in params) every write is durable on completion: no
# flush feature, and a flush the admin asks for anyway costs nothing.
# Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
start_sim_backend
new_disk 8M
base=$params

features() { # WANT-FLUSH WANT-BARRIER PARAMS [add_disk args]
	local flush=$1 barrier=$2 p=$3
	shift 3
	new_guest
	add_disk $DOM "$p" "$@"
	cat > "$BK_TMP/f" <<EOS
xs-expect be feature-flush-cache $flush
xs-expect be feature-barrier $barrier
fill p0 seed:$DOM
send op=write id=1 sector=0 seg=p0 expect=OKAY
send op=read id=2 sector=0 seg=p1 expect=OKAY
check p1 seed:$DOM
EOS
	run_script $DOM "$BK_TMP/f"
	blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
}

features 1 0 "$base:rbd_cache=true:rbd_cache_policy=writeback"
grep -q "librbd cache writeback (flushes needed)" "$BACKEND_LOG" || fail "no writeback log line"
features 1 0 "$base"		# the default: rbd_cache=true, writearound
features 0 0 "$base" --be-key cache=writethrough
features 0 0 "$base:rbd_cache=false"
features 0 0 "$base:rbd_cache_policy=writethrough"
grep -q "no volatile cache (writes durable on completion)" "$BACKEND_LOG" ||
	fail "no writethrough log line"
grep -q "flush-mode=auto: the backing has no volatile write cache" "$BACKEND_LOG" ||
	fail "flush-mode=auto did not say why no flush is advertised"

# writeback: a FLUSH is rbd_aio_flush; FUA is emulated (write + flush)
new_guest
add_disk $DOM "$base:rbd_cache_policy=writeback" --be-key flush-mode=both
cat > "$BK_TMP/w" <<'EOS'
fill p0 seed:5
send op=write id=11 sector=8 seg=p0 expect=OKAY
send op=flush id=12 nr_segments=0 expect=OKAY
send op=barrier id=13 sector=16 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/w"
trace_expect 12 "id=12 issue=flush sector=0 nr=0" "id=12 host=rbd_aio_flush result=0" \
	"op=flush id=12 sector=0 nr=0 segs=0 fua=0 -> host=rbd_aio_flush status=0"
grep -q "op=barrier id=13 sector=16 nr=8 segs=1 fua=0 -> host=drain,rbd_aio_flush,rbd_aio_writev,rbd_aio_flush status=0" "$BACKEND_TRACE" ||
	{ trace_of 13; fail "barrier on a writeback rbd store"; }
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"

# writethrough with flushes asked for: answered without host action
new_guest
add_disk $DOM "$base:rbd_cache=false" --be-key flush-mode=flush
cat > "$BK_TMP/t" <<'EOS'
xs-expect be feature-flush-cache 1
send op=flush id=21 nr_segments=0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/t"
trace_of 21 | grep -q "host=none status=0" || { trace_of 21; fail "a writethrough flush reached librbd"; }
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"

# a bad option is refused with its name, before InitWait
new_guest
add_disk $DOM "$base:rbd_no_such_option=1"
xs_wait "$(bk_be $DOM)/state" 5
xenstore-read "$(bk_be $DOM)/error" | grep -q 'unknown option "rbd_no_such_option=1" for driver rbd' ||
	fail "error node: $(xenstore-read "$(bk_be $DOM)/error")"
stop_backend
exit 0
