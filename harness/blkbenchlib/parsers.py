# SPDX-License-Identifier: GPL-2.0-or-later
"""Parsers for the tools' own output, and the seed-style renderers.

Every parser takes text and returns plain data (dicts, lists of floats);
nothing here runs a program, so tests feed it recorded outputs
(tests/test-harness-parsers.sh, through "blkbench parse").
"""

import re

# --------------------------------------------------------------------------
# bonnie++ CSV
#
# bonnie++ writes one CSV line per run.  Its first field is the CSV format
# version; two layouts exist in the field:
#   "1.93c" (bonnie++ 1.93c/1.96):  ..., file_size, chunk_size, putc, ...
#   "1.97"/"1.98" (1.97 .. 2.00a, Debian 12): ..., file_size, chunk_size,
#                                   seeks, seek_proc_count, putc, ...
# The rest of the line is the same: 6 IO results (value, %CPU), the create
# parameters, 6 create results (value, %CPU), then 12 latencies.

_IO_TESTS = ["putc", "put_block", "rewrite", "getc", "get_block", "seeks"]
_CREATE_TESTS = ["seq_create", "seq_stat", "seq_del",
                 "ran_create", "ran_stat", "ran_del"]

_HEAD = ["format_version", "bonnie_version", "name", "concurrency", "seed",
         "file_size", "chunk_size"]
_TAIL = ([f for t in _IO_TESTS for f in (t, t + "_cpu")] +
         ["num_files", "max_size", "min_size", "file_chunk_size", "num_dirs"] +
         [f for t in _CREATE_TESTS for f in (t, t + "_cpu")] +
         [t + "_latency" for t in _IO_TESTS + _CREATE_TESTS])

BONNIE_LAYOUTS = {
    "1.93c": _HEAD + _TAIL,
    "1.96": _HEAD + _TAIL,
    "1.97": _HEAD + ["seeks_count", "seek_proc_count"] + _TAIL,
    "1.98": _HEAD + ["seeks_count", "seek_proc_count"] + _TAIL,
}

# Metrics blkbench reports from bonnie++, with their bonnie++ field names.
BONNIE_METRICS = {
    "blkout": "put_block",      # sequential block output, K/sec
    "rewrite": "rewrite",       # K/sec
    "blkin": "get_block",       # sequential block input, K/sec
    "seeks": "seeks",           # random seeks/sec
    "create": "seq_create",     # sequential creates/sec
    "seq_read": "seq_stat",
    "seq_delete": "seq_del",
    "ran_create": "ran_create",
    "ran_delete": "ran_del",
}


class ParseError(ValueError):
    """Output that does not look like the tool's: the message says why."""


def _number(text):
    """bonnie++ result: a number, None for "+++++" (too fast) or empty."""
    text = text.strip()
    if text == "" or set(text) == {"+"}:
        return None
    try:
        return float(text)
    except ValueError:
        raise ParseError("not a number: %r" % text) from None


def _latency_us(text):
    """bonnie++ latency "12375us" / "271ms" / "3s" -> microseconds."""
    text = text.strip()
    if text == "" or set(text) == {"+"}:
        return None
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)?", text)
    if not m:
        raise ParseError("not a latency: %r" % text)
    scale = {"us": 1, "ms": 1000, "s": 1000000, None: 1}[m.group(2)]
    return float(m.group(1)) * scale


def parse_bonnie_csv_line(line):
    """One bonnie++ CSV line -> dict of every field by name.

    Numeric results are floats (None when bonnie++ printed "+++++"),
    latencies are microseconds, the rest stay strings.  Raises ParseError
    for an unknown format version or a wrong field count.
    """
    fields = line.strip().split(",")
    layout = BONNIE_LAYOUTS.get(fields[0])
    if layout is None:
        raise ParseError("unknown bonnie++ CSV format version %r (known: %s)"
                         % (fields[0], ", ".join(sorted(BONNIE_LAYOUTS))))
    if len(fields) != len(layout):
        raise ParseError("bonnie++ CSV format %s has %d fields, expected %d"
                         % (fields[0], len(fields), len(layout)))
    rec = {"too_fast": [n for n, v in zip(layout, fields) if v and set(v) == {"+"}]}
    for name, value in zip(layout, fields):
        if name.endswith("_latency"):
            rec[name] = _latency_us(value)
        elif name in _IO_TESTS or name in _CREATE_TESTS or name.endswith("_cpu"):
            rec[name] = _number(value)
        else:
            rec[name] = value
    rec["raw"] = line.strip()
    return rec


def parse_bonnie_csv(text):
    """All bonnie++ CSV lines of text (other lines ignored) -> list of dicts."""
    recs = []
    for line in text.splitlines():
        if re.match(r"^[0-9]+\.[0-9]+[a-z]?,", line):
            recs.append(parse_bonnie_csv_line(line))
    if not recs:
        raise ParseError("no bonnie++ CSV line found")
    return recs


def bonnie_metrics(rec):
    """The metrics blkbench tabulates, from one parsed CSV record."""
    return {m: rec[f] for m, f in BONNIE_METRICS.items()}


def _cell(rec, test, width):
    value, cpu = rec[test], rec[test + "_cpu"]
    if test in rec["too_fast"]:
        return "%*s %3s" % (width, "+++++", "+++")
    if value is None:  # not run (e.g. per-char tests with -f)
        return "%*s %3s" % (width, "", "")
    cpu_s = "+++" if cpu is None else "%3d" % cpu
    return "%*d %s" % (width, value, cpu_s)


def _lat(us):
    """A latency column as bonnie++ prints it: 10 wide, us/ms/s."""
    if us is None:
        return "%10s" % ""
    if us >= 100000000:
        return "%9ds" % (us / 1000000)
    if us >= 100000:
        return "%8dms" % (us / 1000)
    return "%8dus" % us


def render_bonnie_table(rec):
    """The bonnie++ 1.93c human table for one record (as bon_csv2txt)."""
    ver = rec["bonnie_version"]
    name = rec["name"][:15]
    out = []
    out.append("Version %-11s ------Sequential Output------ --Sequential Input- --Random-" % ver)
    out.append("Concurrency %3s     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--"
               % rec["concurrency"])
    out.append("Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP")
    io = " ".join(_cell(rec, t, 5) for t in _IO_TESTS)
    out.append("%-15s%4s %s" % (name, rec["file_size"], io))
    out.append("%-17s%s" % ("Latency", "".join(_lat(rec[t + "_latency"]) for t in _IO_TESTS)))
    out.append("Version %-11s ------Sequential Create------ --------Random Create--------" % ver)
    out.append("%-19s -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--" % name)
    out.append("files:max:min        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP")
    files = rec["num_files"]
    if rec["max_size"]:
        files += ":%s:%s" % (rec["max_size"], rec["min_size"])
    if rec["num_dirs"]:
        files += "/%s" % rec["num_dirs"]
    cr = " ".join(_cell(rec, t, 5) for t in _CREATE_TESTS)
    out.append("%19s %s" % (files, cr))
    out.append("%-17s%s" % ("Latency", "".join(_lat(rec[t + "_latency"]) for t in _CREATE_TESTS)))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# fs_mark output

_FSMARK_HEADER = re.compile(r"^\s*FSUse%\s+Count\s+Size\s+Files/sec\s+App Overhead\s*$")


def parse_fsmark(text):
    """fs_mark (or our fsmark) stdout -> list of row dicts.

    Rows follow the "FSUse% Count Size Files/sec App Overhead" header;
    comment lines ("#...") and blank lines are skipped.  Raises ParseError
    without a header or without rows.
    """
    rows, in_table = [], False
    for line in text.splitlines():
        if _FSMARK_HEADER.match(line):
            in_table = True
            continue
        if not in_table or not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 5 or not parts[0].isdigit():
            if line.startswith("Insufficient free space"):
                continue
            raise ParseError("fs_mark row not understood: %r" % line)
        rows.append({"fsuse": int(parts[0]), "count": int(parts[1]),
                     "size": int(parts[2]), "files_per_sec": float(parts[3]),
                     "app_overhead_us": int(parts[4])})
    if not in_table:
        raise ParseError("no fs_mark header line (FSUse% Count Size Files/sec App Overhead)")
    if not rows:
        raise ParseError("fs_mark printed a header but no rows")
    return rows


def render_fsmark_table(rows):
    out = ["FSUse% Count Size Files/sec App Overhead"]
    for r in rows:
        out.append("%d %d %d %.1f %d" % (r["fsuse"], r["count"], r["size"],
                                         r["files_per_sec"], r["app_overhead_us"]))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# fsync-tester output

_FSYNC_LINE = re.compile(r"^fsync time: ([0-9]+\.[0-9]{4})$")


def parse_fsync(text):
    """fsync-tester stdout -> list of seconds.  Every line must match."""
    times = []
    for line in text.splitlines():
        m = _FSYNC_LINE.match(line)
        if not m:
            raise ParseError("fsync-tester line not understood: %r" % line)
        times.append(float(m.group(1)))
    if not times:
        raise ParseError("fsync-tester printed no fsync time")
    return times


def fsync_summary(times):
    s = sorted(times)
    return {"fsync_n": len(s), "fsync_max": s[-1],
            "fsync_avg": sum(s) / len(s),
            "fsync_p50": s[len(s) // 2]}


# --------------------------------------------------------------------------
# shell "time" lines (zsh style, as in the seed posts)

def format_duration(secs):
    """Seconds -> "12.689" below a minute, "1:51.58" above (zsh's total)."""
    if secs < 60:
        return "%.3f" % secs
    m, s = divmod(secs, 60)
    if m < 60:
        return "%d:%05.2f" % (m, s)
    h, m = divmod(m, 60)
    return "%d:%02d:%05.2f" % (h, m, s)


def format_time_line(command, user, system, real):
    """One zsh-style time line: "CMD  0.06s user 3.90s system 17% cpu 22.906 total"."""
    cpu = 100.0 * (user + system) / real if real > 0 else 0.0
    return "%s  %.2fs user %.2fs system %d%% cpu %s total" % (
        command, user, system, int(cpu), format_duration(real))


_TIME_LINE = re.compile(
    r"^(?P<cmd>.*?)\s+(?P<user>[0-9]+[.,][0-9]+)s user (?P<sys>[0-9]+[.,][0-9]+)s system "
    r"(?P<cpu>[0-9]+)% cpu (?P<total>[0-9:.,]+) total$")


def parse_time_line(line):
    """A zsh-style time line (either decimal mark) -> dict; seconds as floats."""
    m = _TIME_LINE.match(line.strip())
    if not m:
        raise ParseError("time line not understood: %r" % line)

    def num(s):
        return float(s.replace(",", "."))
    total = 0.0
    for part in m.group("total").replace(",", ".").split(":"):
        total = total * 60 + float(part)
    return {"command": m.group("cmd"), "user": num(m.group("user")),
            "system": num(m.group("sys")), "cpu": int(m.group("cpu")),
            "real": total}


# --------------------------------------------------------------------------
# The seed's two-column table

def render_seed_table(rows, columns=("blkout", "create"), formats=None):
    """rows: [(cell name, [run metric dicts in run order])] -> the seed table.

    The cell name is printed on its first run's line only, as in the
    mailing-list posts; values use formats[column] (default: rounded
    integer); a missing metric prints "-".
    """
    formats = formats or {}
    # The seed's widths (11, 9) unless a column name needs more.
    widths = [max(w, len(c) + 2) for w, c in zip([11] + [9] * (len(columns) - 1), columns)]
    nw = max([18] + [len(name) for name, _ in rows])
    head = "%-*s" % (nw, "name") + "".join("%*s" % (w, c) for w, c in zip(widths, columns))
    out = [head, "-" * (len(head) + 1)]
    for name, runs in rows:
        for i, run in enumerate(runs):
            vals = []
            for w, c in zip(widths, columns):
                v = run.get(c)
                if v is None:
                    text = "-"
                elif c in formats:
                    text = formats[c] % v
                else:
                    text = "%d" % round(v)
                vals.append("%*s" % (w, text))
            out.append("%-*s" % (nw, name if i == 0 else "") + "".join(vals))
    return "\n".join(out) + "\n"
