#!/usr/bin/env python3
"""inflight.py SAMPLES: per 0.5 s window with requests, the rate and the
mean number of requests inside blkbackd (d lat_sum_ns / d t, Little's
law), then a summary over the windows of full speed."""
import json, sys
prev = None
rows = []
for line in open(sys.argv[1]):
    t, js = line.split(' ', 1)
    d = json.loads(js)
    if not d.get('vbds'):
        continue
    v = d['vbds'][0]
    cur = (float(t), v['rd_req'] + v['wr_req'], v['lat_sum_ns'])
    if prev and cur[1] > prev[1]:
        dt = cur[0] - prev[0]
        n = cur[1] - prev[1]
        inside = (cur[2] - prev[2]) / 1e9 / dt
        rows.append((cur[0], n / dt, inside, (cur[2] - prev[2]) / n / 1e3))
    prev = cur
for t, iops, inside, lat in rows:
    print("t=%.1f iops=%.0f inside=%.2f mean_lat_us=%.0f" % (t, iops, inside, lat))
full = [r for r in rows if r[1] > 5000]
if full:
    full.sort(key=lambda r: r[2])
    print("windows above 5000/s: %d; requests inside blkbackd: median %.2f, min %.2f, max %.2f"
          % (len(full), full[len(full) // 2][2], full[0][2], full[-1][2]))
