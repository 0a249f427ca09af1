# SPDX-License-Identifier: GPL-2.0-or-later
"""Results: results.csv, results.json, bonnie.csv, gnuplot plots, index.html."""

import csv
import html
import json
import os
import subprocess

from . import parsers
from .system import warn

KNOBS = ("cell", "run", "where", "wce", "barrier", "fs", "mount_opts", "sched",
         "workload", "mem_mib", "size_mib")


def write_csv_json(outdir, rows, meta):
    """One row per run: knobs, metrics, then the run's environment."""
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"meta": meta, "runs": rows}, f, indent=1, sort_keys=False)
        f.write("\n")


def write_bonnie_csv(outdir, lines):
    if lines:
        with open(os.path.join(outdir, "bonnie.csv"), "w") as f:
            f.write("\n".join(lines) + "\n")


UNITS = {"blkout": "K/sec", "rewrite": "K/sec", "blkin": "K/sec", "seeks": "seeks/sec",
         "create": "creates/sec", "seq_read": "stats/sec", "seq_delete": "deletes/sec",
         "ran_create": "creates/sec", "ran_delete": "deletes/sec",
         "files_per_sec": "files/sec", "app_overhead_us": "microseconds"}


def _unit(metric):
    return UNITS.get(metric, "seconds" if metric.endswith("_s") or
                     metric.startswith("fsync_") else "")


def _stats(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return sum(vals) / len(vals), min(vals), max(vals)


def group_key(cell):
    """Cells that differ only by `where` share a plot group."""
    return cell.name.split("-", 1)[1] if "-" in cell.name else cell.name


def plot_metrics(outdir, cells, runs_by_cell, metrics, gnuplot):
    """One plot per metric: mean per where for each wce/barrier group, with
    min..max error bars (run-to-run spread).  Returns [(metric, svg, png)]."""
    if not gnuplot:
        warn("gnuplot not found: no plots")
        return []
    wheres = []
    for c in cells:
        if c.where not in wheres:
            wheres.append(c.where)
    groups = []
    for c in cells:
        g = group_key(c)
        if g not in groups:
            groups.append(g)
    made = []
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    for m in metrics:
        data_path = os.path.join(pdir, m + ".dat")
        any_value = False
        with open(data_path, "w") as f:
            f.write("# group " + " ".join("%s_mean %s_min %s_max" % (w, w, w) for w in wheres) + "\n")
            for g in groups:
                cols = []
                for w in wheres:
                    st = None
                    for c in cells:
                        if c.where == w and group_key(c) == g:
                            st = _stats([r.get(m) for r in runs_by_cell.get(c.name, [])])
                    if st:
                        any_value = True
                        cols.append("%g %g %g" % st)
                    else:
                        cols.append("NaN NaN NaN")
                f.write('"%s" %s\n' % (g, " ".join(cols)))
        if not any_value:
            continue
        # only the wheres that measured this metric (gnuplot refuses an
        # all-NaN series)
        with open(data_path) as f:
            rows = [ln.rsplit('"', 1)[1].split() for ln in f if ln.startswith('"')]
        present = [i for i in range(len(wheres))
                   if any(r[3 * i] != "NaN" for r in rows)]
        first = present[0]
        plots = ", ".join(
            "'%s' using %d:%d:%d%s title '%s'" % (
                data_path, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i,
                ":xtic(1)" if i == first else "", w)
            for i, w in enumerate(wheres) if i in present)
        base = os.path.join(pdir, m)
        script = "\n".join([
            "set style data histograms",
            "set style histogram errorbars gap 2 lw 1",
            "set style fill solid 0.6 border -1",
            "set key top left",
            "set yrange [0:*]",
            "set xtics rotate by -30",
            "set ylabel '%s %s'" % (m, _unit(m)),
            "set title '%s: mean of runs, bars = min..max'" % m,
            "set terminal svg size 800,480 dynamic noenhanced",
            "set output '%s.svg'" % base,
            "plot " + plots,
            "set terminal pngcairo size 800,480 noenhanced",
            "set output '%s.png'" % base,
            "plot " + plots,
            ""])
        with open(base + ".gp", "w") as f:
            f.write(script)
        p = subprocess.run([gnuplot, base + ".gp"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            warn("gnuplot failed for %s: %s" % (m, p.stdout.strip()))
            continue
        made.append((m, "plots/%s.svg" % m, "plots/%s.png" % m))
    return made


def write_html(outdir, title, tables_text, plots, meta):
    e = html.escape
    parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
             "<title>%s</title>" % e(title),
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
             "pre{background:#f4f4f4;padding:1em}</style></head><body>",
             "<h1>%s</h1>" % e(title),
             "<p>Command: <code>%s</code><br>kernel %s, git %s, %s</p>" % (
                 e(meta.get("command", "")), e(meta.get("kernel", "")),
                 e(meta.get("git_rev", "")), e(meta.get("started", ""))),
             "<pre>%s</pre>" % e(tables_text),
             "<p>Data: <a href='results.csv'>results.csv</a>, "
             "<a href='results.json'>results.json</a>"]
    if os.path.exists(os.path.join(outdir, "bonnie.csv")):
        parts.append(", <a href='bonnie.csv'>bonnie.csv</a> (bon_csv2txt/bon_csv2html input)")
    parts.append(", <a href='raw/'>raw tool output</a></p>")
    for m, svg, png in plots:
        parts.append("<h2>%s</h2><p><a href='%s'><img src='%s' alt='%s'></a> "
                     "(<a href='%s'>PNG</a>)</p>" % (e(m), e(svg), e(svg), e(m), e(png)))
    parts.append("</body></html>")
    with open(os.path.join(outdir, "index.html"), "w") as f:
        f.write("\n".join(parts) + "\n")


def summary_table(cells, runs_by_cell, columns, formats):
    """The seed-style table for one workload's cells."""
    rows = [(c.name, runs_by_cell.get(c.name, [])) for c in cells]
    return parsers.render_seed_table(rows, columns, formats)


def higher_is_better(metric):
    """Rates (per second) are better higher; times and latencies lower."""
    return _unit(metric).endswith("/sec")


# The axes a ratio compares, in the order they are printed: the axis, the
# numerator's value and the denominator's (None: every other value over
# the first one given).
_AXES = (("barrier", 1, 0), ("wce", 1, 0), ("where", "domU", "dom0"),
         ("atime", None, None), ("sched", None, None), ("fs", None, None))


def _axis(cell, axis):
    return str(cell.fs) if axis == "fs" else getattr(cell, axis, "")


def _spread(a, b):
    """The ratio of means of runs a over runs b, and its range: a's
    lowest over b's highest .. a's highest over b's lowest."""
    return (sum(a) / len(a)) / (sum(b) / len(b)), min(a) / max(b), max(a) / min(b)


def ratios(cells, runs_by_cell, metrics):
    """Ratios of means between cells that differ in one axis only:
    barrier1/barrier0 and wce1/wce0 per where, domU/dom0 per cell, and
    each further value of --atime, --sched, --fs over the first one; each
    with its range over the runs.  Returns (lines, metrics that had no
    ratio because a cell has no value)."""
    vals = {}
    for c in cells:
        for m in metrics:
            v = [r.get(m) for r in runs_by_cell.get(c.name, [])]
            v = [x for x in v if x is not None]
            if v and min(v) > 0:
                vals[(c.name, m)] = v
    by_key = {}
    for c in cells:
        by_key[tuple(_axis(c, a) for a, _, _ in _AXES)] = c
    lines, unmeasured = [], []
    # the other axes with more than one value label the lines
    varied = [a for a in ("where", "wce", "barrier", "fs", "sched", "atime")
              if len({_axis(c, a) for c in cells}) > 1]

    def pairs(axis, num, den):
        out = []
        i = [a for a, _, _ in _AXES].index(axis)
        values = []
        for c in cells:
            if _axis(c, axis) not in values:
                values.append(_axis(c, axis))
        if num is None:
            combos = [(v, values[0]) for v in values[1:]]
        else:
            combos = [(num, den)] if num in values and den in values else []
        for c in cells:
            k = tuple(_axis(c, a) for a, _, _ in _AXES)
            for n, d in combos:
                if k[i] != d:
                    continue
                kn = k[:i] + (n,) + k[i + 1:]
                if kn in by_key:
                    out.append((by_key[kn], c, n, d))
        return out

    def label(c, skip):
        return "-".join("%s%s" % (a if a in ("wce", "barrier") else "", _axis(c, a))
                        for a in varied if a not in skip)

    for axis, num, den in _AXES:
        for m in metrics:
            groups = {}
            for cn, cd, n, d in pairs(axis, num, den):
                a, b = vals.get((cn.name, m)), vals.get((cd.name, m))
                if not (a and b):
                    if m not in unmeasured:
                        unmeasured.append(m)
                    continue
                r, lo, hi = _spread(a, b)
                if axis in ("barrier", "wce"):
                    other = "wce" if axis == "barrier" else "barrier"
                    head = "%-5s %-8s" % (cd.where, m)
                    rest = label(cd, ("where", "wce", "barrier"))
                    part = "%s%d %s%d/%s%d %.2f (%.2f-%.2f)" % (
                        other, getattr(cd, other), axis, n, axis, d, r, lo, hi)
                    groups.setdefault((head, rest), []).append(part)
                else:
                    name = ("%s/%s" % (n, d)).replace(":", "-")
                    rest = label(cd, (axis,))
                    lines.append("%s %-8s %s %.2f (%.2f-%.2f)" % (name, m, rest, r, lo, hi))
            for (head, rest), parts in groups.items():
                lines.append("%s %s%s" % (head, rest + ": " if rest else "", "; ".join(parts)))
    return lines, unmeasured


def ratio_notes(metrics, lines):
    """What the ratios mean, printed above them."""
    rates = [m for m in metrics if higher_is_better(m)]
    times = [m for m in metrics if not higher_is_better(m)]
    out = ["ratios of means A/B; in brackets their range over the runs",
           "(A's lowest / B's highest .. A's highest / B's lowest: one that",
           "includes 1 shows no difference)"]
    if rates:
        out.append("  %s: per second, above 1 means A is faster" % ", ".join(rates))
    if times:
        out.append("  %s: times, above 1 means A is slower" % ", ".join(times))
    if any(ln.startswith("domU/dom0") for ln in lines):
        out.append("  domU/dom0: the cost of the ring; dom0 is the same I/O stack on the")
        out.append("  same backing without the ring, the ceiling: 0.90 = 10 % lost")
    return out


def append_html(outdir, heading, text, link=None):
    """Add a section (heading, preformatted text, optional link) to an
    existing index.html, before </body>."""
    path = os.path.join(outdir, "index.html")
    e = html.escape
    section = "<h2>%s</h2><pre>%s</pre>%s\n" % (
        e(heading), e(text), "<p><a href='%s'>%s</a></p>" % (e(link), e(link)) if link else "")
    with open(path) as f:
        page = f.read()
    with open(path, "w") as f:
        f.write(page.replace("</body></html>", section + "</body></html>"))


# A run this far from its cell's median is shown as an outlier (it stays
# counted: nothing is dropped).
OUTLIER_FRACTION = 0.10


def _median(vals):
    v = sorted(vals)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def outliers(cells, runs_by_cell, metrics):
    """Lines naming every run more than OUTLIER_FRACTION from its
    cell's median (cells of 3 runs or more), counted all the same."""
    out = []
    for c in cells:
        runs = runs_by_cell.get(c.name, [])
        for m in metrics:
            vals = [r.get(m) for r in runs if r.get(m) is not None]
            if len(vals) < 3:
                continue
            med = _median(vals)
            for r in runs:
                v = r.get(m)
                if v is None or not med:
                    continue
                dev = (v - med) / med
                if abs(dev) > OUTLIER_FRACTION:
                    out.append("outlier: %s run %d %s %g is %d %% %s the cell's median %g "
                               "(counted, not dropped)"
                               % (c.name, r["run"], m, v, round(abs(dev) * 100),
                                  "above" if dev > 0 else "below", med))
    return out


def warmup_lines(rows, metrics):
    """The warm-up runs (one per stack, before round 1): shown, not counted."""
    out = []
    for r in rows:
        vals = " ".join("%s %s" % (m, "-" if r.get(m) is None else "%g" % r[m])
                        for m in metrics)
        out.append("warm-up (not counted): %s: %s" % (r["cell"], vals))
    return out


# The published table (issue 31): what the Xen barrier patch's
# discussion on xen-devel in 2008 reported, ext3 data=journal on a SATA
# disk, bonnie++ with 3 runs per cell.  (axis, wce or barrier of the
# other axis, metric, published ratio, what "reproduced" means)
PUBLISHED_SOURCE = ("published: the Xen barrier patch discussion on xen-devel, 2008 "
                    "(ext3 data=journal on a SATA disk, bonnie++, 3 runs per cell; "
                    "its three block output runs 12 614, 12 598, 12 575 K/s agree to 1 %)")
PUBLISHED = (
    ("barrier", 0, "blkout", 1.00, "free", "barriers free with the cache off"),
    ("barrier", 1, "blkout", 0.97, "below", "barriers cost with the cache on"),
    ("barrier", 1, "create", 0.92, "below", "barriers cost with the cache on"),
    ("wce", 1, "blkout", 1.47, "above", "the write cache pays"),
    ("wce", 1, "create", 2.3, "above", "the write cache pays"),
)


def published_findings(cells, runs_by_cell):
    """The published findings beside ours, one verdict line each, per
    where; [] when the matrix lacks the cells (wce and barrier 0 and 1,
    bonnie++'s blkout/create)."""
    vals = {}
    for c in cells:
        for m in ("blkout", "create"):
            v = [r.get(m) for r in runs_by_cell.get(c.name, []) if r.get(m) is not None]
            if v and min(v) > 0:
                vals[(c.where, c.wce, c.barrier, str(c.fs), m)] = v
    wheres = []
    for c in cells:
        if c.where not in wheres:
            wheres.append(c.where)
    fss = []
    for c in cells:
        if str(c.fs) not in fss:
            fss.append(str(c.fs))
    out = []
    for fs in fss:
        for w in wheres:
            for axis, other, m, pub, want, what in PUBLISHED:
                if axis == "barrier":
                    a, b = (w, other, 1, fs, m), (w, other, 0, fs, m)
                    label = "wce%d barrier1/barrier0" % other
                else:
                    a, b = (w, 1, other, fs, m), (w, 0, other, fs, m)
                    label = "barrier%d wce1/wce0" % other
                if a not in vals or b not in vals:
                    continue
                r, lo, hi = _spread(vals[a], vals[b])
                if want == "free":
                    ok = 0.95 <= lo and hi <= 1.05
                    why = "" if ok else "range leaves 1 +- 5 %"
                elif want == "below":
                    ok = hi < 1
                    why = "" if ok else "range reaches 1 or above"
                else:
                    ok = lo > 1
                    why = "" if ok else "range reaches 1 or below"
                size = "" if abs(r / pub - 1) <= 0.10 else \
                    "; its size differs by %+d %%" % round((r / pub - 1) * 100)
                out.append("%-5s %-6s %-23s published %.2f, ours %.2f (%.2f-%.2f): %s"
                           % (w, m, label, pub, r, lo, hi,
                              "reproduced (%s%s)" % (what, size) if ok
                              else "not reproduced: " + why))
    if out:
        out.insert(0, PUBLISHED_SOURCE)
        spreads = []
        for c in cells:
            v = [x for x in (r.get("blkout") for r in runs_by_cell.get(c.name, []))
                 if x is not None]
            if len(v) >= 2 and min(v) > 0:
                spreads.append(max(v) / min(v))
        if spreads:
            worst = max(spreads)
            out.append("runs agree: published within 1 %% (block output); ours: a cell's "
                       "max/min up to %.3f: %s" % (worst, "reproduced" if worst <= 1.01 else
                                                   "not reproduced (within %d %%)"
                                                   % round((worst - 1) * 100)))
    return out
