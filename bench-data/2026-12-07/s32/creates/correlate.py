# create rate against the disk model's counters, cache-on barrier-off runs of every invocation here
import json, glob, re, os
pts = []
for d in sorted(glob.glob('*/results.json')):
    n = d.split('/')[0]
    for r in json.load(open(d))['runs']:
        if r.get('warmup') or r['barrier'] != 0:
            continue
        f = '%s/stats/%s-run%d.model' % (n, r['cell'], r['run'])
        m = os.path.exists(f) and re.search(r'(\d+) waits for cache room', open(f).read())
        if m:
            pts.append((r['create'], int(m.group(1))))
x = [p[1] for p in pts]; y = [p[0] for p in pts]
mx, my = sum(x) / len(x), sum(y) / len(y)
cov = sum((a - mx) * (b - my) for a, b in zip(x, y))
r = cov / (sum((a - mx) ** 2 for a in x) ** .5 * sum((b - my) ** 2 for b in y) ** .5)
slow = [p for p in pts if p[0] < 4000]; fast = [p for p in pts if p[0] >= 4500]
print('%d runs; Pearson r(creates/s, waits for cache room) = %.2f' % (len(pts), r))
print('runs under 4000/s: %d, cache-room waits %d-%d; runs at 4500/s or more: %d, waits %d-%d' % (
    len(slow), min(p[1] for p in slow), max(p[1] for p in slow),
    len(fast), min(p[1] for p in fast), max(p[1] for p in fast)))
