#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd-ctl over blkbackd's control socket: list, stats (table, JSON,
# Prometheus), status, shutdown [--close], upgrade; the socket is root's
# (0600) and a non-root peer is refused by the daemon too (SO_PEERCRED).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
requires python3 --version
requires setpriv --help
start_sim_backend
sock=$XENSTORED_PATH.blkbackd-0.ctl
[ -S "$sock" ] || fail "no control socket at $sock"
[ "$(stat -c %a "$sock")" = 600 ] || fail "socket mode $(stat -c %a "$sock"), expected 600"

# a guest with known counters (test-backend-stats's script), kept connected
new_guest; A=$DOM
add_disk $A memory:4M --be-key flush-mode=both
cat > "$BK_TMP/s" <<'EOS'
send op=write sector=0 seg=p0 seg=p1 expect=OKAY
send op=write sector=16 seg=p0 expect=OKAY
send op=write sector=24 seg=p0 expect=OKAY
send op=read sector=0 seg=p2 expect=OKAY
send op=read sector=8 seg=p2 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
send op=barrier nr_segments=0 expect=OKAY
send op=discard sector=0 nr_sectors=8 expect=OKAY
send op=read sector=99999999 seg=p2 expect=ERROR
send op=7 sector=0 seg=p2 expect=EOPNOTSUPP
EOS
run_script $A "$BK_TMP/s" --no-close
# a second one, on a file, two queues of 2 pages
new_guest; B=$DOM
truncate -s 8M "$BK_TMP/b.img"
add_disk $B "$BK_TMP/b.img"
blkfront-test attach --domid $B --hold --queues 2 --ring-order 1 >"$BK_TMP/b.out" 2>&1 &
hold=$!
cleanup_fn kill $hold
xs_wait "$(bk_be $B)/state" 4

# ---- list ----
blkbackd-ctl list > "$BK_TMP/list" || fail "list failed"
cat "$BK_TMP/list"
grep -Eq "^$B/51712 +xvda +Connected +4 +2 +2 +0 +flush,discard,persistent,fua=native +$BK_TMP/b.img\$" \
	"$BK_TMP/list" || fail "list: no row for $B/51712 as expected"
grep -Eq "^$A/51712 +xvda +Connected +4 +1 +1 +[0-9]+ +flush,barrier,discard,persistent,fua=[a-z]+ +memory:4M\$" \
	"$BK_TMP/list" || fail "list: no row for $A/51712 as expected"
blkbackd-ctl list --json > "$BK_TMP/list.json" || fail "list --json failed"
python3 - "$BK_TMP/list.json" $A $B "$BK_TMP/b.img" <<'EOP' || fail "list --json: $(cat "$BK_TMP/list.json")"
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["vbd"]: x for x in d["vbds"]}
a, b = v[sys.argv[2] + "/51712"], v[sys.argv[3] + "/51712"]
assert len(v) == 2, v.keys()
assert b["domid"] == int(sys.argv[3]) and b["devid"] == 51712 and b["vdev"] == "xvda"
assert b["params"] == sys.argv[4] and b["state"] == 4 and b["state_name"] == "Connected"
assert b["frontend_state"] == 4 and b["queues"] == 2 and b["ring_pages"] == 2
assert b["sectors"] == 16384 and b["flush_cache"] == 1 and b["persistent"] == 1
assert a["params"] == "memory:4M" and a["barrier"] == 1 and a["pgrants"] >= 1
EOP
# list says what is served, not what the keys say now: a ring-page-order
# the guest rewrites after connecting, a params the admin rewrites under
# a connected vbd (blkbackd keeps serving what it opened)
feB=/local/domain/$B/device/vbd/51712
xenstore-write "$feB/ring-page-order" 7 "$(bk_be $B)/params" "$BK_TMP/other.img"
blkbackd-ctl list > "$BK_TMP/list2" || fail "list (2) failed"
grep -Eq "^$B/51712 +xvda +Connected +4 +2 +2 +0 +flush,discard,persistent,fua=native +$BK_TMP/b.img\$" \
	"$BK_TMP/list2" || { cat "$BK_TMP/list2"; fail "list shows the keys as rewritten, not what is served"; }
xenstore-write "$feB/ring-page-order" 1 "$(bk_be $B)/params" "$BK_TMP/b.img"

# ---- stats ----
want="rd_req=2 wr_req=3 flush_req=1 barrier_req=1 discard_req=1 rd_sect=16 wr_sect=32 discard_sect=8 oo_req=0 errors=1 eopnotsupp=1"
blkbackd-ctl stats $A/51712 > "$BK_TMP/stats" || fail "stats failed"
cat "$BK_TMP/stats"
[ "$(wc -l < "$BK_TMP/stats")" = 2 ] || fail "stats VBD: not one row"
grep -Eq "^$A/51712 +2 +3 +1 +1 +1 +16 +32 +8 +0 +1 +1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\$" "$BK_TMP/stats" ||
	fail "stats: the counters differ from SIGUSR1's $want"
kill -USR1 "$(cat "$BACKEND_PIDFILE")"
wait_for 5 grep -q "stats vbd=$A/51712 $want" "$BACKEND_LOG" || fail "SIGUSR1 disagrees"
blkbackd-ctl stats --json > "$BK_TMP/stats.json" || fail "stats --json failed"
python3 -m json.tool "$BK_TMP/stats.json" >/dev/null || fail "stats --json is not JSON"
python3 - "$BK_TMP/stats.json" $A <<'EOP' || fail "stats --json: $(cat "$BK_TMP/stats.json")"
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["vbd"]: x for x in d["vbds"]}
a = v[sys.argv[2] + "/51712"]
want = dict(rd_req=2, wr_req=3, flush_req=1, barrier_req=1, discard_req=1, rd_sect=16,
            wr_sect=32, discard_sect=8, oo_req=0, errors=1, eopnotsupp=1, connected=1)
for k, n in want.items():
    assert a[k] == n, (k, a[k], n)
assert len(a["lat_us"]) == 32 and all(isinstance(x, int) for x in a["lat_us"])
lat = a["latency_us"]
assert set(lat) == {"p50", "p90", "p99"}
# one sample per response: the script's 10 requests
assert sum(a["lat_us"]) == 10, a["lat_us"]
assert 0 <= lat["p50"] <= lat["p90"] <= lat["p99"], lat
assert len(v) == 2
EOP
blkbackd-ctl stats --prometheus > "$BK_TMP/prom" || fail "stats --prometheus failed"
python3 - "$BK_TMP/prom" $A "$(xenstore-read /local/domain/$A/name)" <<'EOP' || fail "stats --prometheus: $(head -40 "$BK_TMP/prom")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
name = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
label = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
sample = re.compile(r'^(%s)(\{%s(?:,%s)*\})? (-?[0-9.e+-]+|NaN|\+Inf)$' % (name, label, label))
families, seen, samples = {}, [], {}
for l in lines:
    if l.startswith("# HELP "):
        continue
    m = re.match(r'^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$' % name, l)
    if m:
        assert m.group(1) not in families, "family twice: " + l
        families[m.group(1)] = m.group(2)
        seen.append(m.group(1))
        continue
    m = sample.match(l)
    assert m, "bad line: " + l
    base = re.sub(r'_(bucket|count|sum)$', '', m.group(1))
    fam = m.group(1) if m.group(1) in families else base
    assert fam == seen[-1], "sample outside its family: " + l
    samples[m.group(1) + (m.group(2) or "")] = m.group(3)
lab = 'guest="%s",device="xvda"' % sys.argv[3]
def get(n, extra=""):
    return samples[n + "{" + lab + extra + "}"]
assert get("blkbackd_requests_total", ',op="read"') == "2"
assert get("blkbackd_requests_total", ',op="write"') == "3"
assert get("blkbackd_requests_total", ',op="barrier"') == "1"
assert get("blkbackd_sectors_total", ',op="write"') == "32"
assert get("blkbackd_error_responses_total") == "1"
assert get("blkbackd_eopnotsupp_responses_total") == "1"
assert get("blkbackd_connected") == "1"
assert families["blkbackd_response_latency_seconds"] == "histogram"
assert get("blkbackd_response_latency_seconds_bucket", ',le="+Inf"') == get("blkbackd_response_latency_seconds_count")
assert get("blkbackd_response_latency_seconds_count") == "10"
EOP
rc=0; blkbackd-ctl stats 4242/1 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "ENOENT no vbd 4242/1" "$BK_TMP/err" || fail "stats of an unknown vbd: rc $rc"
# a malformed name is a usage error of the command line's (2): the
# whole argument quoted back, and "-1", "+1" are no numbers (blkbackd's
# own refusal of them: test-ctl-idle)
for bad in nonsense 1/abc 1/-51712 +1/51712; do
	rc=0; blkbackd-ctl stats "$bad" 2>"$BK_TMP/err" || rc=$?
	[ $rc = 2 ] && grep -qF "\"$bad\" is not a vbd" "$BK_TMP/err" ||
		fail "stats \"$bad\": rc $rc, $(cat "$BK_TMP/err")"
done
rc=0; blkbackd-ctl --timeout=5abc status 2>"$BK_TMP/err" || rc=$?
[ $rc = 2 ] && grep -q -- '--timeout: "5abc" is not 1..86400' "$BK_TMP/err" || fail "--timeout=5abc: rc $rc"

# ---- JSON strings: UTF-8 as it is ----
new_guest; U=$DOM
add_vbd $U 7 "/nonexistent/dísk 1.img"
xs_wait "$(bk_be $U 7)/state" 5
blkbackd-ctl list --json > "$BK_TMP/u.json" || fail "list --json (UTF-8) failed"
python3 - "$BK_TMP/u.json" $U <<'EOP' || fail "list --json, UTF-8: $(grep -a dísk "$BK_TMP/u.json")"
import json, sys
v = {x["vbd"]: x for x in json.load(open(sys.argv[1], encoding="utf-8"))["vbds"]}
assert v[sys.argv[2] + "/7"]["params"] == "/nonexistent/dísk 1.img", v[sys.argv[2] + "/7"]["params"]
EOP
xenstore-rm "$(bk_be $U 7)"

# ---- status ----
blkbackd-ctl status > "$BK_TMP/status" || fail "status failed"
grep -qx "pid: $(cat "$BACKEND_PIDFILE")" "$BK_TMP/status" || fail "status: $(cat "$BK_TMP/status")"
grep -qx "vbds: 2" "$BK_TMP/status" && grep -qx "connected: 2" "$BK_TMP/status" || fail "status counts"
# --json: the same, as one JSON object
blkbackd-ctl --json status > "$BK_TMP/status.json" || fail "status --json failed"
python3 - "$BK_TMP/status.json" "$(cat "$BACKEND_PIDFILE")" <<'PY' || fail "status --json: $(cat "$BK_TMP/status.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["pid"] == int(sys.argv[2]) and d["vbds"] == 2 and d["connected"] == 2, d
assert isinstance(d["version"], str), d
PY

# ---- root only ----
rc=0; setpriv --reuid=nobody --regid=nogroup --clear-groups blkbackd-ctl --socket="$sock" list \
	>/dev/null 2>"$BK_TMP/err" || rc=$?
[ $rc != 0 ] && grep -q "Permission denied" "$BK_TMP/err" || fail "nobody was not refused: rc $rc, $(cat "$BK_TMP/err")"
# past the file modes, the daemon still refuses (SO_PEERCRED)
chmod o+x "$XENSIM_DIR"; chmod 666 "$sock"
rc=0; setpriv --reuid=nobody --regid=nogroup --clear-groups blkbackd-ctl --socket="$sock" list \
	>"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
chmod o-x "$XENSIM_DIR"; chmod 600 "$sock"
[ $rc = 1 ] && grep -q "EPERM only root may control blkbackd" "$BK_TMP/err" ||
	fail "the daemon served nobody: rc $rc, $(cat "$BK_TMP/err")"
[ ! -s "$BK_TMP/out" ] || fail "nobody got an answer: $(cat "$BK_TMP/out")"
grep -q "control socket: refused a client (pid [0-9]*, uid 65534)" "$BACKEND_LOG" || fail "no log line for the refusal"

# ---- upgrade: the same process, a new program image, still serving ----
pid=$(cat "$BACKEND_PIDFILE")
rc=0; blkbackd-ctl upgrade /nonexistent 2>"$BK_TMP/err" || rc=$?
[ $rc != 0 ] && grep -q "/nonexistent" "$BK_TMP/err" || fail "upgrade to nothing: rc $rc"
kill -0 $pid || fail "a refused upgrade stopped blkbackd"
# what an exec would surely fail on is refused up front, the daemon
# serving on: a directory (which root's access(X_OK) accepts), an
# executable file that is no program
printf 'garbage\n' > "$BK_TMP/junk"
chmod +x "$BK_TMP/junk"
for p in "$BK_TMP:not a regular file" "$BK_TMP/junk:not a program (neither ELF nor #!)"; do
	rc=0; blkbackd-ctl upgrade "${p%%:*}" 2>"$BK_TMP/err" || rc=$?
	[ $rc != 0 ] && grep -qF "upgrade: ${p%%:*}: ${p#*:}" "$BK_TMP/err" ||
		fail "upgrade to ${p%%:*}: rc $rc, $(cat "$BK_TMP/err")"
	kill -0 $pid || fail "a refused upgrade to ${p%%:*} stopped blkbackd"
done
kill $hold; wait $hold 2>/dev/null || true
xs_wait "$(bk_be $B)/state" 6
out=$(blkbackd-ctl upgrade "$abs_top_builddir/backend/blkbackd") || fail "upgrade failed"
[ "$out" = "blkbackd upgraded" ] || fail "upgrade said \"$out\""
[ "$(cat "$BACKEND_PIDFILE")" = $pid ] || fail "the pidfile changed"
blkbackd-ctl status | grep -qx "pid: $pid" || fail "the upgraded daemon is another process"
grep -q "serving .* after an upgrade" "$BACKEND_LOG" || fail "no start line after the upgrade"
# it holds the instance lock again: a second blkbackd is refused
rc=0; timeout 20 blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" 2>"$BK_TMP/err2" || rc=$?
[ $rc = 1 ] && grep -q "another blkbackd (pid $pid)" "$BK_TMP/err2" || fail "lock after upgrade: rc $rc"
# ... also when it names xenstore's socket through a symlink; and
# blkbackd-ctl finds the daemon that way too
ln -s "$XENSTORED_PATH" "$BK_TMP/xs-link"
rc=0; XENSTORED_PATH=$BK_TMP/xs-link timeout 20 blkbackd -f --transport=sim \
	--sim-dir="$XENSIM_DIR" 2>"$BK_TMP/err2" || rc=$?
[ $rc = 1 ] && grep -q "another blkbackd (pid $pid)" "$BK_TMP/err2" ||
	fail "lock through a symlinked XENSTORED_PATH: rc $rc, $(cat "$BK_TMP/err2")"
XENSTORED_PATH=$BK_TMP/xs-link blkbackd-ctl --transport=sim status | grep -qx "pid: $pid" ||
	fail "blkbackd-ctl through a symlinked XENSTORED_PATH"
# ... and from XENSIM_DIR alone, as blkbackd finds xensim
(unset XENSTORED_PATH; blkbackd-ctl status) | grep -qx "pid: $pid" ||
	fail "blkbackd-ctl with XENSIM_DIR=$XENSIM_DIR only"
good_device_works memory:1M
# and the default program: /proc/self/exe
blkbackd-ctl upgrade >/dev/null || fail "upgrade (default path) failed"
blkbackd-ctl status | grep -qx "pid: $pid" || fail "not the same process after the second upgrade"
# still called blkbackd (ps -C, pgrep -x), not "exe"
[ "$(cat /proc/$pid/comm)" = blkbackd ] || fail "after an upgrade from /proc/self/exe: comm $(cat /proc/$pid/comm)"

# ---- shutdown: as SIGTERM, devices left attached; --close: closed ----
new_guest; C=$DOM
add_disk $C memory:1M
echo "send op=write sector=0 seg=p0 expect=OKAY" > "$BK_TMP/c"
run_script $C "$BK_TMP/c" --no-close
out=$(blkbackd-ctl shutdown) || fail "shutdown failed"
[ "$out" = "blkbackd stopped" ] || fail "shutdown said \"$out\""
# its fds close as it exits (the EOF that ended blkbackd-ctl), a moment
# before it is a zombie, which our shell may not have reaped yet (and
# which still answers kill -0)
exited() { [ ! -e /proc/$1 ] || [ "$(awk '{ print $3 }' /proc/$1/stat 2>/dev/null)" = Z ]; }
wait_for 5 exited $pid || fail "blkbackd still runs after shutdown"
wait $pid || fail "blkbackd exited $? after blkbackd-ctl shutdown"
_backend_running=
[ ! -e "$BACKEND_PIDFILE" ] || fail "pidfile left behind"
[ ! -e "$sock" ] || fail "control socket left behind"
xs_is "$(bk_be $C)/state" 4
# a file where the socket goes is somebody's, never replaced: refused
echo precious > "$sock"
rc=0; timeout 20 blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" 2>"$BK_TMP/err3" || rc=$?
[ $rc = 1 ] && grep -qF "control socket $sock: exists and is not a socket; not replaced" "$BK_TMP/err3" ||
	fail "a file at the socket path: rc $rc, $(cat "$BK_TMP/err3")"
[ "$(cat "$sock")" = precious ] || fail "the file at the socket path was replaced"
rm -f "$sock"
xs_is "$(bk_be $C)/state" 4
start_backend
new_guest; D=$DOM
add_disk $D memory:1M
blkfront-test attach --domid $D --hold >"$BK_TMP/d.out" 2>&1 &
hold=$!
cleanup_fn kill $hold
xs_wait "$(bk_be $D)/state" 4
pid=$(cat "$BACKEND_PIDFILE")
out=$(blkbackd-ctl shutdown --close) || fail "shutdown --close failed"
wait $pid || fail "blkbackd exited $? after shutdown --close"
_backend_running=
xs_is "$(bk_be $D)/state" 6
grep -q "blkbackd-ctl shutdown: stopping: draining every device, then closing each" "$BACKEND_LOG" ||
	fail "no log line for shutdown --close"
rc=0; blkbackd-ctl list 2>"$BK_TMP/err" || rc=$?
[ $rc = 3 ] && grep -q "is blkbackd running" "$BK_TMP/err" || fail "no daemon: rc $rc, $(cat "$BK_TMP/err")"
exit 0
