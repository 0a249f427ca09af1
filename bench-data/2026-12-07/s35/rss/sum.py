#!/usr/bin/env python3
# sum.py A B: Rss (KiB) of two /proc/PID/smaps copies, summed by kind:
# the simulated guests' memfds (/memfd:xensim-dom*), heap and
# anonymous mappings, the rest.
import sys
def parse(f):
    maps = {}; cur = None
    for line in open(f):
        p = line.split()
        if '-' in p[0] and not p[0].endswith(':') and len(p) >= 5:
            cur = (p[0], p[5] if len(p) > 5 else '[anon]'); maps[cur] = {}
        elif p[0].endswith(':') and cur and p[1].isdigit():
            maps[cur][p[0][:-1]] = int(p[1])
    return maps
def agg(m):
    d = {}
    for (r, n), v in m.items():
        k = 'guest memfds' if 'xensim-dom' in n else ('heap+anon' if n in ('[heap]', '[anon]') else 'other')
        d[k] = d.get(k, 0) + v.get('Rss', 0)
    return d
a, b = agg(parse(sys.argv[1])), agg(parse(sys.argv[2]))
print('Rss KiB:', ', '.join('%s %d -> %d (%+d)' % (k, a.get(k, 0), b.get(k, 0), b.get(k, 0) - a.get(k, 0))
                            for k in sorted(set(a) | set(b))))
