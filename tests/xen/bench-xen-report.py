#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench-xen-report.py: turn make bench-xen's console into its tables and JSON.

Usage: bench-xen-report.py SERIAL TXT JSON [--meta KEY=VALUE]...

SERIAL is the boot's console (bench-xen-console.txt).  The lines read
(IDs are TABLE:ROUND:LABEL:WL; TABLE block or file):
  @@R ID KEY=VALUE...           the guest's numbers for one workload run
                                (dd, fio's JSON, bonnie++ CSV; its block
                                layer's requests and bytes)
  @@C ID KEY=VALUE...           dom0's CPU ticks over the same run
  @@P TABLE:R LABEL KEY=VALUE...  what the disk negotiated
  @@O TABLE R LABEL LABEL LABEL the backends' order in that round
  @@BK TABLE LABEL TARGET K=V.. each backend's backing
  @@V blkbackd VERSION (git REV)  the --version of the blkbackd that ran
  @@H ...                       the dom0 health watch
  @@T NAME RESULT DETAIL        dom0's steps (bx-*)
  @@Q TABLE:R:blkbackd:WL JSON  blkbackd-ctl stats --json after the run (and
                                after the attach, WL "attach"): the
                                difference of two gives blkbackd's own
                                latency, ring to response, for one run
  [blkbackd] ... a look at the clock X us ...   blkbackd's start-up line:
                                when a look at CLOCK_MONOTONIC costs over
                                1 us it times that histogram with the
                                coarse clock (one step a jiffy, 4 ms)
Every table x round x backend x workload must have its numbers: whatever
is missing is listed and makes the exit status 1, as does any health
finding or failed step.  bonnie++'s "+++++" (a phase too fast to time) is
a result, not a missing number: the row says "too fast" for that backend
(and how many rounds), and no ratio.  Per table: the medians over the
rounds, the ratios of blkbackd's median to each other backend's, and in
how many rounds blkbackd was behind that backend in that same round
(lower throughput, or higher latency or CPU).  The table is printed and
written to TXT; JSON has every round's raw numbers, the medians, ratios,
the blkbackd binary's identity and the parameters.
"""
import json
import re
import statistics
import sys

LABELS = ["blkbackd", "blkback", "qdisk"]
USER_HZ = 100  # /proc/stat ticks, Linux on x86

# workload -> its title and its rows: (row name, key in @@R, scale)
NAMES = {"ddw": "dd-write", "ddr": "dd-read", "rr1": "randread-qd1", "rr32": "randread-qd32",
         "rw1": "randwrite-qd1", "rw32": "randwrite-qd32", "fsync": "write+fdatasync",
         "bonnie": "bonnie-ext4"}
WORKLOADS = [
    ("ddw", "dd bs=1M oflag=direct write", [("MB/s", "mbps", 1)]),
    ("ddr", "dd bs=1M iflag=direct read", [("MB/s", "mbps", 1)]),
    ("rr1", "fio randread 4k qd1", [("IOPS", "read_iops", 1), ("clat p50 us", "read_p50us", 1),
                                    ("clat p99 us", "read_p99us", 1)]),
    ("rr32", "fio randread 4k qd32", [("IOPS", "read_iops", 1), ("clat p50 us", "read_p50us", 1),
                                      ("clat p99 us", "read_p99us", 1)]),
    ("rw1", "fio randwrite 4k qd1", [("IOPS", "write_iops", 1), ("clat p50 us", "write_p50us", 1),
                                     ("clat p99 us", "write_p99us", 1)]),
    ("rw32", "fio randwrite 4k qd32", [("IOPS", "write_iops", 1), ("clat p50 us", "write_p50us", 1),
                                       ("clat p99 us", "write_p99us", 1)]),
    ("fsync", "fio write 4k + fdatasync", [("ops/s", "write_iops", 1),
                                           ("fdatasync p50 us", "sync_p50us", 1),
                                           ("fdatasync p99 us", "sync_p99us", 1)]),
    ("bonnie", "bonnie++ -D on ext4", [("block out K/s", "blkout_kps", 1),
                                       ("rewrite K/s", "rewrite_kps", 1),
                                       ("creates /s", "create_ps", 1)]),
]
# dom0's CPU per GiB and per request; then per request, the backend's own
# tasks (blkbackd's process; xen-blkback's per-ring kernel threads; the
# qdisk QEMU) in user mode and in the kernel (for blkbackd and QEMU: the
# system calls they make), and the rest of dom0 (interrupts, softirqs,
# loop workers, xenconsoled, ...).  The backend's time is its tasks'
# utime/stime (ticks sampled per task), dom0's from /proc/stat, read a
# moment apart: the rest is an estimate and can come out below 0.
CPU_ROWS = [("dom0 cpu-s/GiB", "cpu_per_gib"), ("dom0 cpu-s/100k req", "cpu_per_100k"),
            ("backend user cpu-s/100k req", "own_user_per_100k"),
            ("backend kernel cpu-s/100k req", "own_sys_per_100k"),
            ("rest of dom0 cpu-s/100k req", "rest_per_100k")]
# rows where lower is better (latency, CPU): "behind" means higher there
LOWER_BETTER = ("us", "cpu-s/GiB", "cpu-s/100k req")
# blkbackd only: its response latency from the request's taking off the
# ring to its response (blkbackd-ctl's histogram: bucket b holds
# [2^b, 2^(b+1)) us, bucket 0 under 2 us), over one run.  When a look at
# CLOCK_MONOTONIC costs more than 1 us (in a PV dom0 it is a trap to Xen)
# blkbackd times it with CLOCK_MONOTONIC_COARSE, whose value moves in
# steps of a jiffy (4 ms at HZ=250): a request read as 0 then only means
# "answered within the same tick", and a percentile interpolated inside
# bucket 0 (1-2 us) is an artefact, not a measurement.  So with the
# coarse clock the rows are the share answered within one tick and the
# p99 bucket's lower bound; with the fine clock, p50 and p99.
BB_ROWS_FINE = [("blkbackd ring->rsp p50 us", 0.50), ("blkbackd ring->rsp p99 us", 0.99)]
BB_ROWS_COARSE = [("blkbackd ring->rsp same-tick %", None), ("blkbackd ring->rsp p99 >= us", 0.99)]
TABLE_TITLES = {
    "block": "block devices: a RAM disk (brd) each, blkbackd /dev/ram0, blkback phy:/dev/ram1, qdisk /dev/ram2",
    "file": "files on dom0's tmpfs: blkbackd on its file, blkback on /dev/loop0 over its file, qdisk on its file",
}


def hist_quantile(h, q):
    """A percentile of blkbackd's latency histogram, interpolated linearly
    inside its bucket as blkbackd-ctl does; None without samples."""
    total = sum(h)
    if total <= 0:
        return None
    want, seen = q * total, 0
    for b, n in enumerate(h):
        if n > 0 and seen + n >= want:
            lo = 0 if b == 0 else 2 ** b
            return lo + (2 ** (b + 1) - lo) * (want - seen) / n
        seen += n
    return None


def hist_floor(h, q):
    """The lower bound of the bucket holding a percentile; None without samples."""
    total = sum(h)
    if total <= 0:
        return None
    want, seen = q * total, 0
    for b, n in enumerate(h):
        if n > 0 and seen + n >= want:
            return 0 if b == 0 else 2 ** b
        seen += n
    return None


def bb_hist(stats):
    """The latency histogram of the one vbd in a stats --json document."""
    try:
        vbds = stats["vbds"]
        return [int(x) for x in vbds[0]["lat_us"]] if len(vbds) == 1 else None
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def kv(words):
    d = {}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            d[k] = v
    return d


def num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if x == x else None  # no NaN


TOO_FAST = "+++++"  # bonnie++: the phase ended too fast to time


def fmt(v):
    if v is None:
        return "-"
    if v == TOO_FAST:
        return v
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3f" % v


def behind(row, a, b):
    """blkbackd's value a is worse than the other's b on this row."""
    if row.endswith(LOWER_BETTER) or " us" in row:
        return a > b
    return a < b


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    serial, out_txt, out_json = args[:3]
    meta = {}
    rest = args[3:]
    while rest:
        if rest[0] != "--meta" or len(rest) < 2 or "=" not in rest[1]:
            sys.exit("bad argument %r" % rest[0])
        k, v = rest[1].split("=", 1)
        meta[k] = v
        rest = rest[2:]

    guest, dom0, params, health, steps, boot, bbstats = {}, {}, {}, [], {}, {}, {}
    orders, backings, bb_version, clock_lines, strace = {}, {}, None, [], {}
    with open(serial, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# ") and ":" in line:
                k, v = line[2:].split(":", 1)
                boot[k.strip()] = v.strip()
                continue
            m = re.search(r"^\[[ 0-9.]*\] +(xen_version|release|nr_cpus|xen_commandline) *: (.*)$", line)
            if m:
                boot["xl_info_" + m.group(1)] = m.group(2).strip()
                continue
            m = re.search(r"\[blkbackd\] .*a look at the clock ([0-9.]+) us", line)
            if m:
                clock_lines.append((float(m.group(1)), line[line.index("[blkbackd]"):]))
            i = line.find("@@")
            if i < 0:
                continue
            w = line[i:].split()
            if w[0] == "@@R" and len(w) > 1:
                guest[w[1]] = kv(w[2:])
            elif w[0] == "@@C" and len(w) > 1:
                dom0[w[1]] = kv(w[2:])
            elif w[0] == "@@P" and len(w) > 2:
                params.setdefault(w[2], {})[w[1]] = kv(w[3:])
            elif w[0] == "@@O" and len(w) > 3:
                orders.setdefault(w[1], {})[w[2]] = w[3:]
            elif w[0] == "@@BK" and len(w) > 3:
                backings.setdefault(w[1], {})[w[2]] = dict(target=w[3], **kv(w[4:]))
            elif w[0] == "@@SC" and len(w) > 2:
                strace.setdefault(w[1], []).append(w[2:])
            elif w[0] == "@@V":
                bb_version = " ".join(w[1:])
            elif w[0] == "@@H":
                health.append(" ".join(w[1:]))
            elif w[0] == "@@T" and len(w) > 2 and w[1].startswith("bx-"):
                steps[w[1]] = (w[2], " ".join(w[3:]))
            elif w[0] == "@@Q" and len(w) > 2:
                try:
                    bbstats[w[1]] = json.loads(line[i:].split(None, 2)[2])
                except ValueError:
                    bbstats[w[1]] = None

    # the workloads this run was asked for, in the order they ran
    # (make bench-xen BX_WL=...)
    wanted = meta.get("workloads", "").split() or [w[0] for w in WORKLOADS]
    known = {w[0]: w for w in WORKLOADS}
    workloads = [known[w] for w in wanted if w in known]
    tables = meta.get("tables", "").split() or ["block", "file"]
    coarse = any(c > 1.0 for c, _l in clock_lines)
    bb_rows = BB_ROWS_COARSE if coarse else BB_ROWS_FINE
    m = re.search(r"\(git ([^)]*)\)", bb_version or "")
    blkbackd = {
        "version": bb_version,
        "git_revision": m.group(1) if m else None,
        "build_id": meta.get("blkbackd_build_id"),
        "sha256_16": meta.get("blkbackd_sha256_16"),
        "from": meta.get("blkbackd_from"),
        "latency_clock": "CLOCK_MONOTONIC_COARSE" if coarse else "CLOCK_MONOTONIC",
        "machine_costs_log": sorted(set(l for _c, l in clock_lines)),
    }

    rounds = int(meta.get("rounds", "5"))
    missing, runs = [], []
    # values[(table, wl, row)][label] = {round: value}
    values = {}
    too_fast = {}  # (table, wl, row) -> {label: rounds bonnie++ could not time}

    def put(key, label, r, v):
        values.setdefault(key, {}).setdefault(label, {})[r] = v

    for t in tables:
        for r in range(1, rounds + 1):
            order = orders.get(t, {}).get(str(r)) or LABELS
            for label in order:
                before = "%s:%d:%s:attach" % (t, r, label)
                for wl, _title, rows in workloads:
                    rid = "%s:%d:%s:%s" % (t, r, label, wl)
                    g, c = guest.get(rid), dom0.get(rid)
                    run = {"table": t, "round": r, "backend": label, "workload": wl,
                           "position": order.index(label) + 1 if label in order else None,
                           "guest": g, "dom0": c, "metrics": {}}
                    runs.append(run)
                    if label == "blkbackd":
                        h0, h1 = bb_hist(bbstats.get(before)), bb_hist(bbstats.get(rid))
                        before = rid
                        if h0 is None or h1 is None or len(h0) != len(h1):
                            missing.append("%s: no blkbackd-ctl stats before and after (@@Q)" % rid)
                        elif any(b < a for a, b in zip(h0, h1)):
                            missing.append("%s: blkbackd's counters went back (a restart?)" % rid)
                        else:
                            h = [b - a for a, b in zip(h0, h1)]
                            run["blkbackd_lat_us"] = h
                            for row, q in bb_rows:
                                if q is None:
                                    v = 100.0 * h[0] / sum(h) if sum(h) else None
                                elif coarse:
                                    v = hist_floor(h, q)
                                else:
                                    v = hist_quantile(h, q)
                                if v is not None:
                                    run["metrics"][row] = v
                                    put((t, wl, row), label, r, v)
                    if g is None or c is None:
                        missing.append("%s: no %s" % (rid, "guest numbers" if g is None else "dom0 CPU numbers"))
                        continue
                    for row, key, scale in rows:
                        if g.get(key, "").startswith(TOO_FAST):
                            run["metrics"][row] = TOO_FAST
                            too_fast.setdefault((t, wl, row), {}).setdefault(label, []).append(r)
                            continue
                        v = num(g.get(key))
                        if v is None or v <= 0:
                            missing.append("%s: %s = %r" % (rid, key, g.get(key)))
                            continue
                        run["metrics"][row] = v * scale
                        put((t, wl, row), label, r, v * scale)
                    busy, nbytes, reqs = num(c.get("dom0_busy")), num(g.get("bytes")), num(g.get("reqs"))
                    if busy is None or not nbytes or not reqs:
                        missing.append("%s: dom0_busy %r, bytes %r, reqs %r" %
                                       (rid, c.get("dom0_busy"), g.get("bytes"), g.get("reqs")))
                        continue
                    cpu = busy / USER_HZ
                    run["metrics"]["dom0 cpu-s"] = cpu
                    run["metrics"]["dom0 cpu-s/GiB"] = cpu / (nbytes / 2**30)
                    run["metrics"]["dom0 cpu-s/100k req"] = cpu / (reqs / 1e5)
                    own, ou, osys = (num(c.get(k)) for k in ("backend_ticks", "backend_uticks", "backend_sticks"))
                    if own is not None and ou is not None and osys is not None and num(c.get("backend_tasks")):
                        run["metrics"]["backend user cpu-s/100k req"] = ou / USER_HZ / (reqs / 1e5)
                        run["metrics"]["backend kernel cpu-s/100k req"] = osys / USER_HZ / (reqs / 1e5)
                        run["metrics"]["rest of dom0 cpu-s/100k req"] = (busy - own) / USER_HZ / (reqs / 1e5)
                    elif label in ("blkbackd", "blkback") or c.get("backend_tasks") is not None:
                        missing.append("%s: the backend's own tasks were not found (backend_tasks=%r)" %
                                       (rid, c.get("backend_tasks")))
                    for row, _k in CPU_ROWS:
                        if row in run["metrics"]:
                            put((t, wl, row), label, r, run["metrics"][row])

    # per table: medians, then blkbackd / each other backend, and in how
    # many rounds blkbackd was behind it (same round, same row)
    medians, ratios, behind_n, tables_out = {}, {}, {}, {}
    for t in tables:
        table = []
        for wl, title, rows in workloads:
            table.append(("# " + title, None))
            for row in [r[0] for r in rows] + [r[0] for r in CPU_ROWS] + [r[0] for r in bb_rows]:
                name = "%s %s" % (NAMES[wl], row)
                per = values.get((t, wl, row), {})
                tf = too_fast.get((t, wl, row), {})
                med = {}
                for lb in LABELS:
                    got = per.get(lb, {})
                    if tf.get(lb):
                        med[lb] = TOO_FAST
                    elif len(got) == rounds:
                        med[lb] = statistics.median(got.values())
                    else:
                        med[lb] = None
                rat, bh = {}, {}
                for other in LABELS[1:]:
                    a, b = med["blkbackd"], med[other]
                    timed = a not in (None, TOO_FAST) and b not in (None, TOO_FAST)
                    # no ratio where either is 0 or an estimate below 0
                    # (blkback has no user time; "rest of dom0")
                    timed = timed and a > 0 and b > 0
                    rat["blkbackd/" + other] = a / b if timed else None
                    if timed:
                        pa, pb = per.get("blkbackd", {}), per.get(other, {})
                        bh["blkbackd/" + other] = sum(1 for r in pa if r in pb and behind(row, pa[r], pb[r]))
                    else:
                        bh["blkbackd/" + other] = None
                medians.setdefault(t, {})[name] = med
                ratios.setdefault(t, {})[name] = rat
                behind_n.setdefault(t, {})[name] = bh
                table.append((name, (med, rat, bh, {lb: len(v) for lb, v in tf.items()})))
        tables_out[t] = table

    # blkbackd's system calls per request, from the untimed strace passes
    # (strace -f -c: one row per system call, "% time, seconds,
    # usecs/call, calls, [errors,] name")
    syscalls = {}
    for sid in sorted(strace):
        g = guest.get(sid) or {}
        reqs = num(g.get("reqs"))
        calls = {}
        for f in strace[sid]:
            if len(f) in (5, 6) and f[3].isdigit() and f[-1] != "total":
                calls[f[-1]] = int(f[3])
        total = sum(calls.values())
        syscalls[sid] = {"requests": reqs, "calls": calls, "total": total,
                         "per_request": {k: v / reqs for k, v in calls.items()} if reqs else None,
                         "total_per_request": total / reqs if reqs else None,
                         "guest": g, "dom0": dom0.get(sid), "raw": [" ".join(f) for f in strace[sid]]}
        if not calls or not reqs:
            missing.append("%s: strace pass without %s" % (sid, "system calls" if not calls else "guest requests"))

    dead = [h for h in health if h.startswith(("DEAD", "KERNEL"))]
    summary = [h for h in health if h.startswith("SUMMARY")]
    failed_steps = {k: v for k, v in steps.items() if v[0] != "PASS"}
    failures = list(missing)
    failures += ["health: " + h for h in dead]
    if not summary:
        failures.append("health: no summary (the watch did not finish)")
    failures += ["step %s: %s %s" % (k, v[0], v[1]) for k, v in sorted(failed_steps.items())]
    if not bb_version:
        failures.append("no @@V line: which blkbackd ran is unknown")

    # ---- text ----
    def cell(v, n_tf=0):
        if v == TOO_FAST:
            return "too fast(%d)" % n_tf if n_tf else "too fast"
        return fmt(v)

    def rcell(v, n):
        if v is None:
            return "-"
        return "%s %d/%d" % (fmt(v), n, rounds) if n is not None else fmt(v)

    lines = []
    lines.append("make bench-xen: real Xen nested under QEMU/TCG, medians of %d rounds, backends in rotating order" % rounds)
    lines.append("tree git %s%s, %s, %s s (boot %s s)" % (
        meta.get("git_revision", "?")[:12], " (dirty)" if meta.get("git_dirty") == "yes" else "",
        meta.get("date", "?"), meta.get("duration_s", "?"), meta.get("boot_s", "?")))
    lines.append("blkbackd binary: %s, build id %s, from %s" % (
        bb_version or "?", blkbackd["build_id"] or "?", blkbackd["from"] or "?"))
    lines.append("command: %s" % meta.get("command", "?"))
    lines.append("health: %s" % ("; ".join(summary + dead) if summary or dead else "no summary"))
    lines.append("ratios: blkbackd's median / the other's; N/%d: rounds where blkbackd was behind it in that round" % rounds)
    lines.append("(behind = lower MB/s, IOPS, ops/s, K/s, /s, %; higher us, cpu-s).  Under TCG only the ratios mean anything.")
    lines.append("backend user/kernel: its own tasks' time (blkbackd; blkback's kernel threads; QEMU); rest of dom0:")
    lines.append("the remainder of dom0's busy time (interrupts, softirqs, ...; an estimate: it can read below 0)")
    if coarse:
        lines.append("blkbackd's ring->rsp histogram uses CLOCK_MONOTONIC_COARSE here (4 ms steps): "
                     "same-tick % = requests answered before its next tick")
    hdr = ("metric", "blkbackd", "blkback", "qdisk", "bbd/blkback behind", "bbd/qdisk behind")
    for t in tables:
        lines.append("")
        lines.append("== table %s: %s" % (t, TABLE_TITLES.get(t, t)))
        for lb in LABELS:
            bk = backings.get(t, {}).get(lb, {})
            p = params.get(lb, {}).get("%s:1" % t) or params.get(lb, {}).get("%s:0" % t) or {}
            lines.append("   %-9s %s (%s, %s bytes); queues=%s ring-page-order=%s persistent(be/fe)=%s/%s indirect=%s flush=%s" % (
                lb, bk.get("target", "?"), bk.get("kind", "?"), bk.get("bytes", "?"), p.get("queues"),
                p.get("ring_order"), p.get("be_persistent"), p.get("fe_persistent"), p.get("indirect"), p.get("flush")))
        lines.append("   order: %s" % "; ".join("%s: %s" % (r, " ".join(o)) for r, o in sorted(orders.get(t, {}).items(), key=lambda x: int(x[0]))))
        lines.append("%-42s %10s %10s %10s %18s %18s" % hdr)
        for name, val in tables_out[t]:
            if val is None:
                lines.append(name)
                continue
            med, rat, bh, ntf = val
            lines.append("%-42s %10s %10s %10s %18s %18s" % (
                name, cell(med["blkbackd"], ntf.get("blkbackd", 0)), cell(med["blkback"], ntf.get("blkback", 0)),
                cell(med["qdisk"], ntf.get("qdisk", 0)),
                rcell(rat["blkbackd/blkback"], bh["blkbackd/blkback"]), rcell(rat["blkbackd/qdisk"], bh["blkbackd/qdisk"])))
    if syscalls:
        lines.append("")
        lines.append("== blkbackd's system calls per request (strace -f -c on all its threads; one extra, untimed pass")
        lines.append("   after the rounds; guest requests from its block layer, ramp and setup included)")
        names = sorted({k for v in syscalls.values() for k in v["calls"]},
                       key=lambda k: -max(v["calls"].get(k, 0) for v in syscalls.values()))
        sids = sorted(syscalls)
        lines.append("%-24s" % "system call" + "".join("%23s" % (x.split(":")[0] + " " + x.split(":")[-1]) for x in sids))
        lines.append("%-24s" % "guest requests" + "".join("%23s" % fmt(syscalls[x]["requests"]) for x in sids))
        for k in names + ["total"]:
            row = []
            for x in sids:
                v = syscalls[x]
                n = v["total"] if k == "total" else v["calls"].get(k, 0)
                row.append("%23s" % ("%d (%s/req)" % (n, fmt(n / v["requests"])) if v["requests"] else str(n)))
            lines.append("%-24s" % k + "".join(row))
    if any(too_fast.values()):
        lines.append("")
        lines.append("too fast(N): bonnie++ printed +++++ (the phase ended before it could be timed) in N rounds")
    if failures:
        lines.append("")
        lines.append("FAILED: %d problem(s):" % len(failures))
        lines.extend("  " + x for x in failures)
    text = "\n".join(lines) + "\n"
    with open(out_txt, "w") as f:
        f.write(text)
    sys.stdout.write(text)

    # ---- JSON ----
    doc = {
        "bench": "make bench-xen",
        "git_revision": meta.get("git_revision"),
        "git_dirty": meta.get("git_dirty") == "yes",
        "blkbackd": blkbackd,
        "date": meta.get("date"),
        "duration_s": num(meta.get("duration_s")),
        "rounds": rounds,
        "tables": tables,
        "parameters": {
            "meta": meta,
            "boot": boot,
            "negotiated": params,
            "backings": backings,
            "orders": orders,
            "disk_mib": 256,
            "guest": {"vcpus": 2, "memory_mib": 512},
            "user_hz": USER_HZ,
            "workloads": {wl: {"name": NAMES[wl], "what": title} for wl, title, _r in workloads},
        },
        "runs": runs,
        "medians": medians,
        "ratios": ratios,
        "rounds_blkbackd_behind": behind_n,
        "blkbackd_syscalls": syscalls,
        "too_fast_rounds": {"%s %s %s" % k: v for k, v in too_fast.items()},
        "health": health,
        "steps": {k: {"result": v[0], "detail": v[1]} for k, v in sorted(steps.items())},
        "failures": failures,
    }
    with open(out_json, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
