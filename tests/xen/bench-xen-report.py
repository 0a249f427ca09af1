#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench-xen-report.py: turn make bench-xen's console into its table and JSON.

Usage: bench-xen-report.py SERIAL TXT JSON [--meta KEY=VALUE]...

SERIAL is the boot's console (bench-xen-console.txt).  The lines read:
  @@R R:LABEL:WL KEY=VALUE...   the guest's numbers for one workload run
                                (dd, fio's JSON, bonnie++ CSV; its block
                                layer's requests and bytes)
  @@C R:LABEL:WL KEY=VALUE...   dom0's CPU ticks over the same run
  @@P R LABEL KEY=VALUE...      what the disk negotiated
  @@H ...                       the dom0 health watch
  @@T NAME RESULT DETAIL        dom0's steps (bx-*)
  @@Q R:blkbackd:WL JSON        blkbackd-ctl stats --json after the run (and
                                after the attach, WL "attach"): the
                                difference of two gives blkbackd's own
                                latency, ring to response, for one run
Every round x backend x workload must have its numbers: whatever is missing
is listed and makes the exit status 1, as does any health finding or failed
step.  bonnie++'s "+++++" (a phase too fast to time) is a result, not a
missing number: the row says "+++++" for that backend, and no ratio.  Medians over the rounds go to the table (TXT, printed too) and,
with every round's raw numbers and the parameters, to JSON.
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
CPU_ROWS = [("dom0 cpu-s/GiB", "cpu_per_gib"), ("dom0 cpu-s/100k req", "cpu_per_100k")]
# blkbackd only: its response latency from the request's taking off the
# ring to its response (blkbackd-ctl's histogram: bucket b holds
# [2^b, 2^(b+1)) us, bucket 0 under 2 us), over one run.  In a PV dom0
# blkbackd reads CLOCK_MONOTONIC_COARSE (a precise clock is a system call
# there), so its samples move in steps of a jiffy (4 ms at HZ=250): read
# these rows for the tens of milliseconds, not below.
BB_ROWS = [("blkbackd ring->rsp p50 us", 0.50), ("blkbackd ring->rsp p99 us", 0.99)]


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

    rounds = int(meta.get("rounds", "3"))
    missing, runs = [], []
    # values[(wl, row)][label] = [per round]
    values = {}
    too_fast = {}  # (wl, row) -> the labels bonnie++ could not time in some round
    for r in range(1, rounds + 1):
        for label in LABELS:
            before = "%d:%s:attach" % (r, label)
            for wl, _title, rows in workloads:
                rid = "%d:%s:%s" % (r, label, wl)
                g, c = guest.get(rid), dom0.get(rid)
                run = {"round": r, "backend": label, "workload": wl, "guest": g, "dom0": c, "metrics": {}}
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
                        for row, q in BB_ROWS:
                            v = hist_quantile(h, q)
                            if v is not None:
                                run["metrics"][row] = v
                                values.setdefault((wl, row), {}).setdefault(label, []).append(v)
                if g is None or c is None:
                    missing.append("%s: no %s" % (rid, "guest numbers" if g is None else "dom0 CPU numbers"))
                    continue
                for row, key, scale in rows:
                    if g.get(key, "").startswith(TOO_FAST):
                        run["metrics"][row] = TOO_FAST
                        too_fast.setdefault((wl, row), set()).add(label)
                        continue
                    v = num(g.get(key))
                    if v is None or v <= 0:
                        missing.append("%s: %s = %r" % (rid, key, g.get(key)))
                        continue
                    run["metrics"][row] = v * scale
                    values.setdefault((wl, row), {}).setdefault(label, []).append(v * scale)
                busy, nbytes, reqs = num(c.get("dom0_busy")), num(g.get("bytes")), num(g.get("reqs"))
                if busy is None or not nbytes or not reqs:
                    missing.append("%s: dom0_busy %r, bytes %r, reqs %r" %
                                   (rid, c.get("dom0_busy"), g.get("bytes"), g.get("reqs")))
                    continue
                cpu = busy / USER_HZ
                run["metrics"]["dom0 cpu-s"] = cpu
                run["metrics"]["dom0 cpu-s/GiB"] = cpu / (nbytes / 2**30)
                run["metrics"]["dom0 cpu-s/100k req"] = cpu / (reqs / 1e5)
                for row, _k in CPU_ROWS:
                    values.setdefault((wl, row), {}).setdefault(label, []).append(run["metrics"][row])

    # the table: medians, then blkbackd / each other backend
    medians, ratios, table = {}, {}, []
    for wl, title, rows in workloads:
        table.append(("# " + title, None))
        for row in [r[0] for r in rows] + [r[0] for r in CPU_ROWS] + [r[0] for r in BB_ROWS]:
            name = "%s %s" % (NAMES[wl], row)
            per = values.get((wl, row), {})
            med = {lb: statistics.median(per[lb]) if len(per.get(lb, [])) == rounds else None for lb in LABELS}
            for lb in too_fast.get((wl, row), ()):
                med[lb] = TOO_FAST
            medians[name] = med
            rat = {}
            for other in LABELS[1:]:
                a, b = med["blkbackd"], med[other]
                timed = a not in (None, TOO_FAST) and b not in (None, TOO_FAST)
                rat["blkbackd/" + other] = a / b if timed and b else None
            ratios[name] = rat
            table.append((name, (med, rat)))

    dead = [h for h in health if h.startswith(("DEAD", "KERNEL"))]
    summary = [h for h in health if h.startswith("SUMMARY")]
    failed_steps = {k: v for k, v in steps.items() if v[0] != "PASS"}
    failures = list(missing)
    failures += ["health: " + h for h in dead]
    if not summary:
        failures.append("health: no summary (the watch did not finish)")
    failures += ["step %s: %s %s" % (k, v[0], v[1]) for k, v in sorted(failed_steps.items())]

    # ---- text ----
    hdr = ["metric"] + LABELS + ["blkbackd/blkback", "blkbackd/qdisk"]
    lines = []
    lines.append("make bench-xen: real Xen nested under QEMU/TCG, medians of %d rounds" % rounds)
    lines.append("git %s%s, %s, %s s (boot %s s)" % (
        meta.get("git_revision", "?")[:12], " (dirty)" if meta.get("git_dirty") == "yes" else "",
        meta.get("date", "?"), meta.get("duration_s", "?"), meta.get("boot_s", "?")))
    lines.append("command: %s" % meta.get("command", "?"))
    for lb in LABELS:
        p = params.get(lb, {}).get("1")
        if p:
            lines.append("%-9s queues=%s ring-page-order=%s persistent(be/fe)=%s/%s indirect=%s flush=%s" % (
                lb, p.get("queues"), p.get("ring_order"), p.get("be_persistent"), p.get("fe_persistent"),
                p.get("indirect"), p.get("flush")))
    lines.append("health: %s" % ("; ".join(summary + dead) if summary or dead else "no summary"))
    lines.append("ratios > 1: blkbackd higher (better for MB/s, IOPS, ops/s, K/s, /s; worse for us and cpu-s)")
    lines.append("")
    lines.append("%-42s %10s %10s %10s %17s %15s" % tuple(hdr))
    for name, val in table:
        if val is None:
            lines.append(name)
            continue
        med, rat = val
        lines.append("%-42s %10s %10s %10s %17s %15s" % (
            name, fmt(med["blkbackd"]), fmt(med["blkback"]), fmt(med["qdisk"]),
            fmt(rat["blkbackd/blkback"]), fmt(rat["blkbackd/qdisk"])))
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
        "date": meta.get("date"),
        "duration_s": num(meta.get("duration_s")),
        "rounds": rounds,
        "parameters": {
            "meta": meta,
            "boot": boot,
            "negotiated": params,
            "disk_mib": 256,
            "guest": {"vcpus": 2, "memory_mib": 512},
            "user_hz": USER_HZ,
            "workloads": {wl: {"name": NAMES[wl], "what": title} for wl, title, _r in workloads},
        },
        "runs": runs,
        "medians": medians,
        "ratios": ratios,
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
