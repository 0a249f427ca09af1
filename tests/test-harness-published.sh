#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test-harness-published.sh: the report's verdicts on the published 2008
# table (blkbenchlib/report.py published_findings), its outlier lines and
# warm-up lines, from made-up runs whose verdicts are known: each finding
# reproduced in dom0, two not in domU (a range crossing 1), one outlier
# named and still counted.
. ./functions.sh
requires python3 --version
tmp=$(mktemp -d /tmp/harness-published.XXXXXX)
cleanup_fn rm -rf "$tmp"

PYTHONPATH=$top_srcdir/harness python3 - > "$tmp/out" <<'PY' || fail "python failed"
from blkbenchlib import matrix, report
fs = matrix.FsSpec.parse("ext3:data=journal")
runs = {("dom0", 0, 1): (12614, 12598, 12575), ("dom0", 0, 0): (12600, 12610, 12590),
        ("dom0", 1, 1): (18000, 18100, 18050), ("dom0", 1, 0): (18600, 18650, 18700),
        ("domU", 0, 1): (12000, 12100, 11900), ("domU", 0, 0): (12000, 12050, 12020),
        ("domU", 1, 1): (17000, 17100, 21000), ("domU", 1, 0): (17600, 17650, 17700)}
cells, by = [], {}
for (w, wce, b), v in runs.items():
    c = matrix.Cell(w, wce, b, fs, "", "bonnie", "%s-wce%d-barrier%d" % (w, wce, b))
    cells.append(c)
    by[c.name] = [{"run": i + 1, "blkout": x, "create": x / 10 * (2.3 if wce else 1)}
                  for i, x in enumerate(v)]
print("\n".join(report.published_findings(cells, by)))
print("\n".join(report.outliers(cells, by, ["blkout"])))
print("\n".join(report.warmup_lines([{"cell": "dom0-wce0-barrier1", "blkout": 28761,
                                      "create": None}], ["blkout", "create"])))
PY
diff -u - "$tmp/out" <<'X' || fail "the verdicts differ (above)"
published: the Xen barrier patch discussion on xen-devel, 2008 (ext3 data=journal on a SATA disk, bonnie++, 3 runs per cell; its three block output runs 12 614, 12 598, 12 575 K/s agree to 1 %)
dom0  blkout wce0 barrier1/barrier0  published 1.00, ours 1.00 (1.00-1.00): reproduced (barriers free with the cache off)
dom0  blkout wce1 barrier1/barrier0  published 0.97, ours 0.97 (0.96-0.97): reproduced (barriers cost with the cache on)
dom0  create wce1 barrier1/barrier0  published 0.92, ours 0.97 (0.96-0.97): reproduced (barriers cost with the cache on)
dom0  blkout barrier1 wce1/wce0      published 1.47, ours 1.43 (1.43-1.44): reproduced (the write cache pays)
dom0  create barrier1 wce1/wce0      published 2.30, ours 3.30 (3.28-3.31): reproduced (the write cache pays; its size differs by +43 %)
domU  blkout wce0 barrier1/barrier0  published 1.00, ours 1.00 (0.99-1.01): reproduced (barriers free with the cache off)
domU  blkout wce1 barrier1/barrier0  published 0.97, ours 1.04 (0.96-1.19): not reproduced: range reaches 1 or above
domU  create wce1 barrier1/barrier0  published 0.92, ours 1.04 (0.96-1.19): not reproduced: range reaches 1 or above
domU  blkout barrier1 wce1/wce0      published 1.47, ours 1.53 (1.40-1.76): reproduced (the write cache pays)
domU  create barrier1 wce1/wce0      published 2.30, ours 3.52 (3.23-4.06): reproduced (the write cache pays; its size differs by +53 %)
runs agree: published within 1 % (block output); ours: a cell's max/min up to 1.235: not reproduced (within 24 %)
outlier: domU-wce1-barrier1 run 3 blkout 21000 is 23 % above the cell's median 17100 (counted, not dropped)
warm-up (not counted): dom0-wce0-barrier1: blkout 28761 create -
X
