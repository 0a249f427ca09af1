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


def ratios(cells, runs_by_cell, metrics):
    """barrier1/barrier0 (per where, wce) and wce1/wce0 (per where, barrier)
    of the mean of each metric: the numbers BENCHMARKS.md records."""
    mean = {}
    for c in cells:
        for m in metrics:
            st = _stats([r.get(m) for r in runs_by_cell.get(c.name, [])])
            if st:
                mean[(c.where, c.wce, c.barrier, m)] = st[0]
    lines = []
    wheres = []
    for c in cells:
        if c.where not in wheres:
            wheres.append(c.where)
    for w in wheres:
        for m in metrics:
            parts = []
            for wce in (0, 1):
                a, b = mean.get((w, wce, 1, m)), mean.get((w, wce, 0, m))
                if a and b:
                    parts.append("wce%d barrier1/barrier0 %.2f" % (wce, a / b))
            for bar in (1, 0):
                a, b = mean.get((w, 1, bar, m)), mean.get((w, 0, bar, m))
                if a and b:
                    parts.append("barrier%d wce1/wce0 %.2f" % (bar, a / b))
            if parts:
                lines.append("%-5s %-8s %s" % (w, m, "; ".join(parts)))
    for m in metrics:
        for wce in (0, 1):
            for bar in (1, 0):
                a, b = mean.get(("domU", wce, bar, m)), mean.get(("dom0", wce, bar, m))
                if a and b:
                    lines.append("domU/dom0 %-8s wce%d-barrier%d %.2f" % (m, wce, bar, a / b))
    return "\n".join(lines) + ("\n" if lines else "")


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
