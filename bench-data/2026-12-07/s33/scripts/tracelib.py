"""Shared by the analysis scripts: read a BK_D8_TRACE file, find the
block output phase in it."""
import collections


def load(path):
    """R: (arrive, ready, done, op, off, len) sorted by arrival;
    S: (now, busy_ns, seeks, rot_waits, requests, wt_held)."""
    R, S = [], []
    for line in open(path):
        p = line.split()
        (R if p[0] == 'R' else S).append(tuple(int(x) for x in p[1:]))
    R.sort()
    return R, S


def blkout_window(R):
    """(start, end) in ns of bonnie++'s block output phase: from the first
    0.2 s with over 3 MB of writes after the first 0.5 s, to the first
    0.2 s with reads (the rewrite phase) in both of its 0.1 s bins."""
    t0 = R[0][0]
    W, Rd = collections.Counter(), collections.Counter()
    for a, rd, d, op, off, ln in R:
        b = int((a - t0) / 1e8)
        if op == 0:
            Rd[b] += ln
        elif op in (1, 2):
            W[b] += ln
    bs = rs = None
    for b in range(0, 400):
        if bs is None and b > 5 and W[b] + W[b + 1] > 3e6:
            bs = b
        if bs is not None and Rd[b] > 0.5e6 and Rd[b + 1] > 0.5e6:
            rs = b
            break
    return t0 + bs * 1e8, t0 + rs * 1e8
