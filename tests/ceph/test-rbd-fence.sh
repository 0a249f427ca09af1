#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Taking a disk over from a writer that died or froze on another host,
# with the image's exclusive lock broken only once that writer is fenced.
# Three hosts (each its own xensim and blkbackd, so nothing of one host's
# state directory helps another), one RBD image:
#  1. A's guest writes (blkfront-test verify, QD 8, flushes, guest log)
#     and A's blkbackd is SIGKILLed under it.  B's attach is refused at
#     once while A's watch on the image lives (the error names the
#     holder "which still watches the image"); once the OSD has dropped
#     the watch, the same attach connects: the holder is blocklisted
#     (ceph osd blocklist ls) and its lock broken.  The image holds, byte
#     for byte, every write A's guest was promised durable (covered by an
#     acknowledged flush; the guest log's hashes), or a later acknowledged
#     one; at most QD blocks (writes in flight) hold a whole later block
#     of verify's (check-only); none is stale or lost.
#  2. The same with B's blkbackd SIGSTOPped (frozen, not dead) and C
#     taking over.  Then B is let go on (SIGCONT): its queued writes and
#     its guest's next ones fail (it is fenced), and the image does not
#     change by a byte: the frozen writer, resumed, wrote nothing.
# The OSDs' watch timeout is set to 15 s for this test (default 30 s).
# Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/ceph/lib-hosts.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
cephc() { timeout 60 ceph -c "$CEPH_CONF" "$@"; }
cephc config set osd osd_client_watch_timeout 15 || fail "ceph config set osd_client_watch_timeout"
cleanup_fn timeout 60 ceph -c "$CEPH_CONF" config rm osd osd_client_watch_timeout
new_disk 4M
DEPTH=8

# the image's lock owner ("IP:PORT/NONCE") and its watchers, from Ceph
lock_owner() {
	timeout 60 rbd -c "$CEPH_CONF" lock ls --format json "$img" |
		python3 -c 'import json, sys; l = json.load(sys.stdin); print(l[0]["address"] if l else "")'
}
watching() { # ADDR: ADDR watches the image's header
	timeout 60 rbd -c "$CEPH_CONF" status --format json "$img" |
		python3 -c 'import json, sys; sys.exit(0 if any(w["address"] == sys.argv[1] for w in json.load(sys.stdin)["watchers"]) else 1)' "$1"
}
gone() { ! watching "$1"; }
blocklisted() { # ADDR
	cephc osd blocklist ls 2>/dev/null | grep -qF "$1"
}
image_md5() { timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" - | md5sum | cut -d' ' -f1; }

# the guest log against the image (include/guestlog.h): a block holds
# the last write that was promised durable (covered by an acknowledged
# flush, or FUA) or a later acknowledged one (librbd's cache is
# writeback: what no flush covered may be lost); never zeroes or an
# earlier version than the promised one.  At most DEPTH blocks (writes
# in flight, never acknowledged) may hold something the log never saw.
check_glog() { # GLOG
	rm -f "$BK_TMP/now.img"
	timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" "$BK_TMP/now.img" >/dev/null ||
		fail "rbd export"
	python3 - "$1" "$BK_TMP/now.img" $DEPTH <<'PY' || fail "the image does not hold what the guest was promised ($1)"
import sys
glog, image, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
def fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h
hist, covers = {}, 0
for line in open(glog):
    f = line.split()
    if f[0] == "W" and len(f) >= 6:
        hist.setdefault(int(f[2]), []).append((int(f[1]), int(f[3]), f[4], f[5] == "1"))
    elif f[0] == "F" and len(f) >= 3:
        covers = max(covers, int(f[2]))
data = open(image, "rb").read()
bad, n = [], {"promised": 0, "later": 0, "inflight": 0, "none": 0}
for s, ws in sorted(hist.items()):
    nr = ws[-1][1]
    b = data[s * 512:(s + nr) * 512]
    h = fnv(b)
    hashes = [w[2] for w in ws]
    req = max((i for i, w in enumerate(ws) if w[0] <= covers or w[3]), default=-1)
    if req >= 0 and h == hashes[req]:
        n["promised"] += 1
    elif h in hashes[req + 1:]:
        n["later"] += 1
    elif h in hashes[:max(req, 0)] or (req >= 0 and not any(b)):
        bad.append("sector %d: %s" % (s, "zeroes" if not any(b) else "an earlier version"))
    elif req < 0 and not any(b):
        n["none"] += 1
    else:
        n["inflight"] += 1
print("guest log: %d blocks written, flushes cover seq %d: %d hold the promised write, "
      "%d a later acknowledged one, %d one in flight, %d nothing yet promised"
      % (len(hist), covers, n["promised"], n["later"], n["inflight"], n["none"]))
for x in bad[:10]:
    print("LOST: " + x)
sys.exit(1 if bad or n["inflight"] > depth or not n["promised"] else 0)
PY
}

acked() { [ "$(grep -c '^W ' "$1" 2>/dev/null)" -ge "$2" ]; } # GLOG N
# a guest writing on the current host until stopped; returns at once
start_writer() { # DOM GLOG OUT
	blkfront-test verify --domid $1 --size 4M --bs 16k --iodepth $DEPTH --flush-every 16 \
		--count 100000000 --timeout 60000 --log "$2" >"$3" 2>&1 &
	writer=$!
	cleanup_fn kill -KILL $writer
	wait_for 30 acked "$2" 300 ||
		{ cat "$3"; fail "the writer did not get 300 writes acknowledged"; }
}

# take the image over on the current host: refused while OLD's watch
# lives, connected once it is gone, OLD blocklisted
take_over() { # OLD_OWNER
	local be
	new_guest
	add_disk $DOM "$params"
	be=$(bk_be $DOM)
	xs_wait "$be/state" 5 30
	xenstore-read "$be/error" | grep -qF "locked by another writer (lock owner \"$1\", which still watches the image)" ||
		fail "a second writer while the holder's watch lives: error \"$(xenstore-read "$be/error")\""
	blocklisted "$1" && fail "$1 blocklisted before its watch expired"
	blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove the refused vbd"
	wait_for 60 gone "$1" ||
		fail "$1 still watches the image 60 s later"
	echo "$1's watch is gone"
	new_guest
	add_disk $DOM "$params"
	be=$(bk_be $DOM)
	xs_wait "$be/state" 2 30	# InitWait: the image is open (the lock taken)
	blocklisted "$1" || fail "the lock of $1 was broken but $1 is not blocklisted"
	grep -qF "blocklisting and breaking the lock of a writer that no longer watches the image (dead, or frozen longer than the OSDs' watch timeout) (owner \"$1\")" "$BACKEND_LOG" ||
		fail "no log of the takeover"
	[ "$(lock_owner)" != "$1" ] || fail "the lock is still $1's"
}

# ---- 1. a writer SIGKILLed on host A, the disk taken over on B ----
host_new A
new_guest
A_DOM=$DOM
add_disk $A_DOM "$params"
start_writer $A_DOM "$BK_TMP/a.glog" "$BK_TMP/a.out"
a_owner=$(lock_owner)
[ -n "$a_owner" ] || fail "A's blkbackd holds no lock"
watching "$a_owner" || fail "A's blkbackd ($a_owner) does not watch the image"
kill -KILL "$(host_pid A)"
kill -KILL $writer; wait $writer 2>/dev/null || true
echo "A ($a_owner) killed with $(grep -c '^W ' "$BK_TMP/a.glog") writes acknowledged"
host_new B
take_over "$a_owner"
check_glog "$BK_TMP/a.glog"

# ---- 2. B's blkbackd frozen (SIGSTOP) under a writer, C takes over ----
blkfront-test verify --domid $DOM --check-only --size 4M --bs 16k --timeout 20000 \
	>"$BK_TMP/b.check" 2>&1 || { cat "$BK_TMP/b.check"; fail "check-only on B"; }
grep "^verify: ok: check-only" "$BK_TMP/b.check"
B_DOM=$DOM
start_writer $B_DOM "$BK_TMP/b.glog" "$BK_TMP/b.out"
b_owner=$(lock_owner)
[ -n "$b_owner" ] && [ "$b_owner" != "$a_owner" ] || fail "B's lock owner: \"$b_owner\""
b_pid=$(host_pid B)
kill -STOP "$b_pid"
cleanup_fn kill -CONT "$b_pid"
echo "B ($b_owner) frozen with $(grep -c '^W ' "$BK_TMP/b.glog") writes acknowledged"
host_new C
take_over "$b_owner"
check_glog "$BK_TMP/b.glog"
sum=$(image_md5)
# B wakes up: fenced, it lands nothing; its guest's writes fail
kill -CONT "$b_pid"
writer_done() { ! kill -0 $writer 2>/dev/null; }
if wait_for 60 writer_done; then
	wait $writer && fail "B's guest went on writing without an error after B was fenced"
else
	fail "B's guest neither finished nor failed within 60 s of B's wake-up"
fi
grep -E "^verify: (FAILED|.*error)|I/O error|EIO|status -1" "$BK_TMP/b.out" | head -3
[ "$(image_md5)" = "$sum" ] || fail "the image changed after B, fenced, woke up"
echo "B woke up fenced: the image did not change"
# C's guest reads the disk: every block whole
blkfront-test verify --domid $DOM --check-only --size 4M --bs 16k --timeout 20000 \
	>"$BK_TMP/c.check" 2>&1 || { cat "$BK_TMP/c.check"; fail "check-only on C"; }
grep "^verify: ok: check-only" "$BK_TMP/c.check"
host B
stop_backend
host C
stop_backend
exit 0
