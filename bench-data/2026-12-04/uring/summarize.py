#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Medians per engine over run-bench.sh's rounds (bench-r*-ENGINE.txt):
# each round's ring/fio ratio of medians, and the ring's own rows.
import glob, re, statistics, sys
d = sys.argv[1] if len(sys.argv) > 1 else "."
rows = {}
for path in sorted(glob.glob(d + "/bench-r*-*.txt")):
    eng = re.search(r"bench-r\d+-(.*)\.txt", path).group(1)
    for line in open(path):
        m = re.match(r"ratio (\S+) (\S+) ring/fio = ([0-9.]+)", line)
        if m:
            rows.setdefault((m.group(1), eng), {}).setdefault("ratio", []).append(float(m.group(3)))
        if line.startswith("bench=") and "path=ring" in line:
            kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
            name = "randread-4k-qd32" if kv["bench"] == "randread-4k" else "seqwrite-1m"
            r = rows.setdefault((name, eng), {})
            for k in ("iops", "MBps", "bk_us_per_req", "fe_us_per_req", "host_us_per_req"):
                r.setdefault(k, []).append(float(kv[k]))
for (name, eng), r in sorted(rows.items()):
    med = {k: statistics.median(v) for k, v in r.items()}
    print("%-17s %-8s ratio ring/fio: median %.3f (rounds: %s)  ring: iops %.0f MBps %.1f "
          "bk_us/req %.2f fe_us/req %.2f host_us/req %.2f (medians of %d runs)" % (
          name, eng, med["ratio"], " ".join("%.3f" % x for x in r["ratio"]), med["iops"],
          med["MBps"], med["bk_us_per_req"], med["fe_us_per_req"], med["host_us_per_req"],
          len(r["iops"])))
