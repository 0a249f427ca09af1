#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd-ctl for scripts: distinct exit statuses (0 done, 1 refused,
# 2 usage, 3 not running, 4 timed out), errors as JSON on stdout under
# --json, options after the command, JSON typed by a fixed schema per
# command, Prometheus series keyed by guest name and device (domid only
# where it must be), a latency histogram with _sum and _count and no
# quantile label, status in Prometheus's format (blkbackd_up 0 when
# down, and blkbackd_vbds_stalled).  And the protocol's records name the
# guest, the device and the latency sum.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
requires python3 --version
start_sim_backend
sock=$XENSTORED_PATH.blkbackd-0.ctl

# ---- usage: 2, before any connection ----
rc=0; blkbackd-ctl --bogus list >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "unknown option: rc $rc"
rc=0; blkbackd-ctl frobnicate 2>"$BK_TMP/err" || rc=$?
[ $rc = 2 ] && grep -qx 'blkbackd-ctl: bad command line for "frobnicate" (see --help)' "$BK_TMP/err" ||
	fail "unknown command: rc $rc, $(cat "$BK_TMP/err")"
rc=0; blkbackd-ctl --json frobnicate >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
[ $rc = 2 ] || fail "--json, unknown command: rc $rc"
python3 - "$BK_TMP/out" <<'EOP' || fail "--json usage error: $(cat "$BK_TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d == {"error": {"errno": "EINVAL", "exit": 2,
                       "message": 'bad command line for "frobnicate" (see --help)'}}, d
EOP
# two output formats: refused, neither silently wins
rc=0; blkbackd-ctl --json --prometheus stats >/dev/null 2>"$BK_TMP/err" || rc=$?
[ $rc = 2 ] && grep -qx 'blkbackd-ctl: --json and --prometheus: one output format only' "$BK_TMP/err" ||
	fail "--json --prometheus: rc $rc, $(cat "$BK_TMP/err")"
rc=0; blkbackd-ctl stats --prometheus --json >/dev/null 2>"$BK_TMP/err" || rc=$?
[ $rc = 2 ] || fail "--prometheus --json: rc $rc, $(cat "$BK_TMP/err")"
# --socket naming a directory: the command line's mistake (2), not
# "Connection refused (is blkbackd running?)" (3)
for c in list status; do
	rc=0; blkbackd-ctl --socket="$BK_TMP" $c >/dev/null 2>"$BK_TMP/err" || rc=$?
	[ $rc = 2 ] && grep -q "$BK_TMP is .*not a socket" "$BK_TMP/err" ||
		fail "--socket=DIR $c: rc $rc, $(cat "$BK_TMP/err")"
done
# a malformed vbd name is the command line's mistake too (2), not an
# error blkbackd answered (1)
for a in "stats 1" "stats 1/" "resize 1/x" "resize 4294967296/1" "stats 1/2/3"; do
	rc=0; blkbackd-ctl $a >/dev/null 2>"$BK_TMP/err" || rc=$?
	[ $rc = 2 ] && grep -q "is not a vbd: DOMID/DEVID" "$BK_TMP/err" ||
		fail "blkbackd-ctl $a: rc $rc, $(cat "$BK_TMP/err")"
done
# an option before --json: its error is JSON too
rc=0; blkbackd-ctl --bogus --json list >"$BK_TMP/out" 2>/dev/null || rc=$?
[ $rc = 2 ] && python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["error"]["exit"] == 2' "$BK_TMP/out" ||
	fail "--bogus --json: rc $rc, $(cat "$BK_TMP/out")"

# ---- options anywhere ----
new_guest; A=$DOM
add_disk $A memory:4M
cat > "$BK_TMP/s" <<'EOS'
send op=write sector=0 seg=p0 expect=OKAY
send op=read sector=0 seg=p2 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
EOS
run_script $A "$BK_TMP/s" --no-close
nameA=$(xenstore-read /local/domain/$A/name)
blkbackd-ctl stats $A/51712 --json > "$BK_TMP/s1.json" 2>"$BK_TMP/err" ||
	fail "stats VBD --json: $(cat "$BK_TMP/err")"
blkbackd-ctl stats --json $A/51712 > "$BK_TMP/s2.json" || fail "stats --json VBD"
blkbackd-ctl --json stats $A/51712 > "$BK_TMP/s3.json" || fail "--json stats VBD"
python3 - "$BK_TMP"/s[123].json <<'EOP' || fail "stats --json anywhere differ"
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:])
# the uptime-free parts are equal: one vbd each, the same counters
for x in (b, c):
    assert [v["wr_req"] for v in x["vbds"]] == [v["wr_req"] for v in a["vbds"]] == [1]
EOP
blkbackd-ctl list --socket "$sock" >/dev/null || fail "list --socket PATH"
blkbackd-ctl shutdown --close --json >/dev/null 2>&1 && fail "shutdown --json accepted"

# ---- the raw records: guest, vdev, lat_sum_ns ----
python3 - "$sock" $A "$nameA" <<'EOP' || fail "raw stats record"
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"stats %s/51712\n" % sys.argv[2].encode())
buf = b""
while not buf.endswith(b"ok\n"):
    d = s.recv(65536); assert d, buf; buf += d
rec = buf.decode().splitlines()[0].split(" ")
assert rec[0] == "stats", rec
kv = dict(w.split("=", 1) for w in rec[1:])
assert kv["guest"] == sys.argv[3] and kv["vdev"] == "xvda", kv
assert int(kv["lat_sum_ns"]) > 0, kv
assert sum(int(x) for x in kv["lat_us"].split(",")) == 3, kv
EOP

# ---- typed JSON: every key of the schema, its type ----
blkbackd-ctl list --json > "$BK_TMP/list.json" || fail "list --json"
blkbackd-ctl stats --json > "$BK_TMP/stats.json" || fail "stats --json"
blkbackd-ctl status --json > "$BK_TMP/status.json" || fail "status --json"
# a vbd whose guest never came: no frontend state, features null
new_guest; N=$DOM
add_vbd $N 5 memory:1M
xs_wait "$(bk_be $N 5)/state" 2
blkbackd-ctl list --json > "$BK_TMP/list2.json" || fail "list --json (2)"
python3 - "$BK_TMP" $A "$nameA" $N <<'EOP' || fail "typed JSON"
import json, sys
t, A, nameA, N = sys.argv[1:]
S, I, B, L = "str", "int", "bool", "list"
kinds = {"str": (str,), "int": (int,), "bool": (bool,), "list": (list,)}
def check(obj, schema, nullable):
    assert list(obj) == list(schema), (list(obj), list(schema))
    for k, ty in schema.items():
        v = obj[k]
        if v is None:
            assert k in nullable, (k, "null")
            continue
        assert type(v) in kinds[ty], (k, v, ty)
list_schema = dict(vbd=S, domid=I, devid=I, guest=S, vdev=S, params=S, state=I,
    state_name=S, frontend_state=I, phase=S, queues=I, ring_pages=I, sectors=I,
    flush_cache=B, barrier=B, discard=B, persistent=B, fua=S, writeback=B,
    read_only=B, engine=S, pgrants=I, failed=B, removed=B, error=S)
stats_schema = dict(vbd=S, domid=I, devid=I, guest=S, vdev=S, connected=B, rd_req=I,
    wr_req=I, flush_req=I, barrier_req=I, discard_req=I, rd_sect=I, wr_sect=I,
    discard_sect=I, oo_req=I, errors=I, eopnotsupp=I, pgrants=I, pgrant_maps=I,
    lat_us=L, lat_sum_ns=I, latency_us=None)
status_schema = dict(pid=I, version=S, uptime_s=I, transport=S, domid=I, vbds=I,
    connected=I, close_on_exit=B)
lst = json.load(open(t + "/list.json"))
assert list(lst) == ["vbds"]
a = lst["vbds"][0]
# a RAM disk: no I/O engine (null; a file store says io_uring or libaio)
check(a, list_schema, {"error", "vdev", "guest", "engine"})
assert a["engine"] is None, a
assert a["vbd"] == A + "/51712" and a["domid"] == int(A) and a["guest"] == nameA
assert a["state"] == 4 and a["frontend_state"] == 4 and a["phase"] == "connected"
assert a["flush_cache"] is True and a["read_only"] is False and a["failed"] is False
assert a["error"] is None and a["sectors"] == 8192, a
st = json.load(open(t + "/stats.json"))["vbds"][0]
sch = dict(stats_schema); del sch["latency_us"]
check({k: v for k, v in st.items() if k != "latency_us"}, sch, set())
assert list(st)[-1] == "latency_us" and set(st["latency_us"]) == {"p50", "p90", "p99"}
assert st["connected"] is True and st["wr_req"] == 1 and st["guest"] == nameA
assert st["vdev"] == "xvda" and st["lat_sum_ns"] > 0 and sum(st["lat_us"]) == 3
assert all(type(x) is int for x in st["lat_us"]) and len(st["lat_us"]) == 32
assert all(type(x) is float for x in st["latency_us"].values()), st["latency_us"]
ss = json.load(open(t + "/status.json"))
check(ss, status_schema, set())
assert ss["close_on_exit"] is False and ss["transport"] == "sim" and ss["vbds"] == 1
# the guest that never came: absent things are null, not "-" or 0
v = {x["vbd"]: x for x in json.load(open(t + "/list2.json"))["vbds"]}
n = v[N + "/5"]
check(n, list_schema, {"error", "vdev", "frontend_state", "sectors", "flush_cache",
      "barrier", "discard", "persistent", "fua", "writeback", "read_only", "engine"})
assert n["frontend_state"] is None and n["sectors"] is None and n["fua"] is None, n
assert n["state"] == 2 and n["phase"] == "disconnected" and n["vdev"] is None, n
EOP
xenstore-rm "$(bk_be $N 5)"

# ---- strings: escaped, UTF-8 kept ----
# (xenstore-write takes \ as an escape itself: no backslash here)
xenstore-write /local/domain/$A/name $'r\xc3\xa9al "q"\x01\nx'
# (blkbackd learns the new name from its watch on it: wait for that)
esc_ok() {
	blkbackd-ctl list --json > "$BK_TMP/esc.json" || fail "list --json, odd name"
	python3 -c 'import json,sys; v = json.load(open(sys.argv[1], encoding="utf-8"))["vbds"][0]
assert v["guest"] == "r\u00e9al \"q\"\x01\nx", v["guest"]' "$BK_TMP/esc.json" 2>/dev/null
}
wait_for 5 esc_ok || fail "JSON escaping: $(grep -a guest "$BK_TMP/esc.json")"
# and as bytes: UTF-8 as it is (not \u00e9), the control characters
# escaped (no raw one in the text: one document, one line)
python3 -c 'import sys; b = open(sys.argv[1], "rb").read()
assert "r\u00e9al".encode() in b and b.endswith(b"}\n"), b
assert not [c for c in b[:-1] if c < 0x20], b' "$BK_TMP/esc.json" || fail "JSON odd name: $(cat -A "$BK_TMP/esc.json")"
blkbackd-ctl stats --prometheus > "$BK_TMP/esc.prom" || fail "stats --prometheus, odd name"
grep -qF "blkbackd_connected{guest=\"réal \\\"q\\\""$'\x01'"\\nx\",device=\"xvda\"} 1" "$BK_TMP/esc.prom" ||
	fail "Prometheus escaping: $(grep -a connected "$BK_TMP/esc.prom")"
xenstore-write /local/domain/$A/name "$nameA"

# ---- errors: 1, JSON on stdout too ----
rc=0; blkbackd-ctl stats 4242/51712 >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -qx "blkbackd-ctl: ENOENT no vbd 4242/51712" "$BK_TMP/err" && [ ! -s "$BK_TMP/out" ] ||
	fail "unknown vbd: rc $rc, $(cat "$BK_TMP/err")"
rc=0; blkbackd-ctl stats 4242/51712 --json >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -qx "blkbackd-ctl: ENOENT no vbd 4242/51712" "$BK_TMP/err" ||
	fail "unknown vbd, --json: rc $rc, $(cat "$BK_TMP/err")"
python3 - "$BK_TMP/out" <<'EOP' || fail "JSON error: $(cat "$BK_TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d == {"error": {"errno": "ENOENT", "message": "no vbd 4242/51712", "exit": 1}}, d
EOP

# ---- Prometheus: guest and device; domid where it must be ----
new_guest; B=$DOM
add_disk $B memory:1M
xs_wait "$(bk_be $B)/state" 2
xenstore-write /local/domain/$B/name "$nameA"	# two domains of one name
new_guest; C=$DOM
add_disk $C memory:1M
xs_wait "$(bk_be $C)/state" 2
xenstore-rm /local/domain/$C/name		# and one without
blkbackd-ctl stats --prometheus > "$BK_TMP/prom" || fail "stats --prometheus"
python3 - "$BK_TMP/prom" $A $B $C "$nameA" <<'EOP' || fail "stats --prometheus: $(cat "$BK_TMP/prom")"
import re, sys
A, B, C, name = sys.argv[2:]
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
fam, types, samples = None, {}, {}
for l in lines:
    m = re.match(r'^# TYPE (\S+) (counter|gauge|histogram|summary)$', l)
    if m:
        fam = m.group(1); assert fam not in types, l; types[fam] = m.group(2); continue
    if l.startswith("# HELP "):
        continue
    m = re.match(r'^([a-z_]+)\{(.*)\} (\S+)$', l)
    assert m, l
    n = m.group(1)
    assert n == fam or re.sub(r'_(bucket|sum|count)$', '', n) == fam, (l, fam)
    labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
    assert "quantile" not in labels, l
    key = (n, tuple(sorted(labels.items())))
    assert key not in samples, "duplicate series: " + l
    samples[key] = m.group(3)
assert "blkbackd_response_latency_quantile_seconds" not in types
assert types["blkbackd_response_latency_seconds"] == "histogram"
def get(n, **lab):
    return samples[(n, tuple(sorted(lab.items())))]
# A and B share a name: both carry domid; C has none: guest "" and domid
a = dict(guest=name, device="xvda", domid=A)
b = dict(guest=name, device="xvda", domid=B)
c = dict(guest="", device="xvda", domid=C)
assert get("blkbackd_requests_total", op="write", **a) == "1"
assert get("blkbackd_requests_total", op="write", **b) == "0"
assert get("blkbackd_connected", **c) == "0"
assert get("blkbackd_vbd_info", vbd=A + "/51712", devid="51712", **a) == "1"
# the histogram: cumulative buckets in seconds, +Inf == _count, _sum in s
bk = sorted((float(dict(k[1])["le"]), int(v)) for k, v in samples.items()
            if k[0] == "blkbackd_response_latency_seconds_bucket" and
            dict(k[1]).get("domid") == A)
assert len(bk) == 32 and bk[0][0] == 2e-6 and bk[-1][0] == float("inf"), bk
assert all(x[1] <= y[1] for x, y in zip(bk, bk[1:])), bk
assert bk[-1][1] == int(get("blkbackd_response_latency_seconds_count", **a)) == 3
s = float(get("blkbackd_response_latency_seconds_sum", **a))
assert 0 < s < 60, s
EOP
# one name, one vbd: no domid in the series; domid in the info only
xenstore-write /local/domain/$B/name "other$B"
blkbackd-ctl stats $A/51712 --prometheus > "$BK_TMP/prom1" || fail "stats VBD --prometheus"
grep -qx "blkbackd_requests_total{guest=\"$nameA\",device=\"xvda\",op=\"write\"} 1" "$BK_TMP/prom1" ||
	fail "series not keyed by guest and device: $(grep requests_total "$BK_TMP/prom1")"
grep -qx "blkbackd_vbd_info{guest=\"$nameA\",device=\"xvda\",vbd=\"$A/51712\",devid=\"51712\",domid=\"$A\"} 1" \
	"$BK_TMP/prom1" || fail "info: $(grep vbd_info "$BK_TMP/prom1")"
grep 'domid=' "$BK_TMP/prom1" | grep -qv '^blkbackd_vbd_info{' && fail "domid outside the info"

# ---- status --prometheus ----
blkbackd-ctl status --prometheus > "$BK_TMP/sprom" || fail "status --prometheus"
pyout=$(python3 - "$BK_TMP/sprom" <<'EOP'
import re, sys
want = ["blkbackd_up 1", 'blkbackd_info{version="%s",transport="sim"} 1',
        "blkbackd_uptime_seconds N", "blkbackd_vbds 3", "blkbackd_vbds_connected 1"]
got = [l for l in open(sys.argv[1]).read().splitlines() if not l.startswith("#")]
types = re.findall(r'^# TYPE (\S+) gauge$', open(sys.argv[1]).read(), re.M)
assert types == ["blkbackd_up", "blkbackd_info", "blkbackd_uptime_seconds",
                 "blkbackd_vbds", "blkbackd_vbds_connected"], types
assert len(got) == 5 and got[0] == want[0] and got[3:] == want[3:], got
assert re.fullmatch(r'blkbackd_info\{version="[^"]+",transport="sim"\} 1', got[1]), got
assert re.fullmatch(r'blkbackd_uptime_seconds [0-9]+', got[2]), got
EOP
) || fail "status --prometheus: $(cat "$BK_TMP/sprom") $pyout"

# ---- not running: 3; status --prometheus says blkbackd_up 0 ----
stop_backend
rc=0; blkbackd-ctl list >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
[ $rc = 3 ] && grep -q "is blkbackd running" "$BK_TMP/err" || fail "not running: rc $rc, $(cat "$BK_TMP/err")"
rc=0; blkbackd-ctl list --json >"$BK_TMP/out" 2>/dev/null || rc=$?
[ $rc = 3 ] && python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))["error"]
assert e["errno"] in ("ENOENT", "ECONNREFUSED") and e["exit"] == 3, e' "$BK_TMP/out" ||
	fail "not running, --json: rc $rc, $(cat "$BK_TMP/out")"
rc=0; blkbackd-ctl status --prometheus >"$BK_TMP/out" 2>/dev/null || rc=$?
# (and how many vbds it left attached, stalled: test-backend-stop-stalled)
[ $rc = 3 ] && [ "$(grep -v '^#' "$BK_TMP/out" | sed 's/^blkbackd_vbds_stalled [0-9]*$/STALLED/')" = "blkbackd_up 0
STALLED" ] ||
	fail "status --prometheus, not running: rc $rc, $(cat "$BK_TMP/out")"

# ---- timed out: 4 (a socket that takes the line and never answers) ----
python3 - "$BK_TMP/mute.sock" <<'EOP' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
conns = []
end = time.time() + 30
while time.time() < end:
    s.settimeout(1)
    try:
        conns.append(s.accept()[0])
    except socket.timeout:
        pass
EOP
mute=$!
cleanup_fn kill $mute
wait_for 10 test -S "$BK_TMP/mute.sock" || fail "no mute socket"
rc=0; blkbackd-ctl --socket="$BK_TMP/mute.sock" status --json >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
[ $rc = 4 ] && grep -q "no answer from blkbackd within 10 s" "$BK_TMP/err" &&
	python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))["error"]
assert e["errno"] == "ETIMEDOUT" and e["exit"] == 4, e' "$BK_TMP/out" ||
	fail "mute daemon: rc $rc, $(cat "$BK_TMP/err" "$BK_TMP/out")"
exit 0
