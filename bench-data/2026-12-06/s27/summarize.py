#!/usr/bin/env python3
"""Per row and contender of a bench-rbd/-nbd output: runs, median, min-max
of the row's key (iops for 4 KiB, MBps for 1 MiB), and the median CPU
per request of each process."""
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("bench="):
        continue
    kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
    key = "iops" if kv["bs"] == "4k" else "MBps"
    r = rows.setdefault(kv["bench"], {})
    r.setdefault(kv["path"], []).append(kv)
for bench, paths in rows.items():
    for path, runs in paths.items():
        key = "iops" if runs[0]["bs"] == "4k" else "MBps"
        v = [float(k[key]) for k in runs]
        cpu = []
        for f in ("bk_us_per_req", "fe_us_per_req", "fio_proc_us_per_req", "fio_us_per_req", "server_us_per_req"):
            c = [float(k[f]) for k in runs if f in k]
            if c:
                cpu.append("%s %.1f" % (f.replace("_us_per_req", ""), statistics.median(c)))
        print("%-18s %-13s n=%d %s median %.0f (%.0f-%.0f)  cpu us/req: %s" % (
            bench, path, len(v), key, statistics.median(v), min(v), max(v), ", ".join(cpu)))
