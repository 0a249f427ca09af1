# SPDX-License-Identifier: GPL-2.0-or-later
"""blkbench ceiling: is the dom0 row the ceiling of the domU row?

The dom0 row (blkfront-test export --direct) is meant to be the domU row
without the ring.  Whether it is can be seen on the bare disk, with no
filesystem and no guest page cache in the way: both stacks are started
once, side by side, each on a fresh zero-filled backing of its own, and
the same fio jobs run on their loop devices in turn (dom0 then domU,
then the other way round), so that the two runs of a pair are seconds
apart.  Runs on a fresh stack each, as "blkbench run" makes them, spread
too widely here to compare (one 128 KiB write job: 609-1214 MB/s within
half an hour).

Prints one line per run and, per job, the medians, their ratio
domU/dom0 (below 1: the ring costs that much) and in how many pairs
dom0 was ahead.
"""

import json
import os
import shutil
import statistics
import tempfile

from .matrix import Cell, FsSpec
from .stack import WHERES
from .system import BenchError, Cleanup, LoopDevice, info, make_backing, run

# (name, fio options): what a guest's disk sees from bonnie++'s block
# phases, a database's random reads, and a journal's synchronous writes
JOBS = (
    ("write-128k-qd32", ["--rw=write", "--bs=128k", "--iodepth=32"]),
    ("read-128k-qd32", ["--rw=read", "--bs=128k", "--iodepth=32"]),
    ("randread-4k-qd32", ["--rw=randread", "--bs=4k", "--iodepth=32"]),
    ("randwrite-4k-qd1", ["--rw=randwrite", "--bs=4k", "--iodepth=1"]),
)


def _fio(tools, dev, opts, seconds, size_mib, log):
    p = run([tools.path("fio"), "--name=ceiling", "--filename=" + dev, "--direct=1",
             "--ioengine=libaio", "--runtime=%d" % seconds, "--time_based",
             "--size=%dM" % size_mib, "--output-format=json"] + opts, log=log)
    try:
        job = json.loads(p.stdout)["jobs"][0]
    except (ValueError, KeyError, IndexError):
        raise BenchError("fio on %s printed no JSON result: %s"
                         % (dev, p.stdout.strip()[:200])) from None
    side = "write" if any("write" in o for o in opts) else "read"
    return job[side]["bw_bytes"] / 1e6


def ceiling(tools, rounds, seconds, wce, disk_mib, workdir):
    """Run JOBS rounds times on standing dom0 and domU stacks; returns
    the report lines."""
    if os.geteuid() != 0:
        raise BenchError("blkbench ceiling needs root (loop devices, FUSE)")
    if rounds < 1 or seconds < 1 or disk_mib < 64:
        raise BenchError("blkbench ceiling: --rounds and --seconds must be at least 1, "
                         "--disk at least 64 (MiB)")
    base = tempfile.mkdtemp(prefix="blkbench-ceiling.", dir=workdir)
    out = []
    with Cleanup() as cl:
        cl.push("remove %s" % base, shutil.rmtree, base, True)
        log = open(os.path.join(base, "commands.log"), "w")
        cl.push("close the log", log.close)
        devs = {}
        for where in ("dom0", "domU"):
            w = WHERES[where](tools)
            w.probe()
            cell = Cell(where, wce, 1, FsSpec.parse("ext4"), "", "fio", where)
            tmp = os.path.join(base, where)
            os.mkdir(tmp)
            backing = os.path.join(tmp, "backing.img")
            make_backing(backing, disk_mib, "zero", log)
            disk = w.start(cell, tmp, backing, cl, log, tmp)
            loop = LoopDevice(disk.path, log)
            cl.push("detach %s" % loop.dev, loop.detach)
            loop.set_write_cache(disk.write_cache, log)
            devs[where] = loop.dev
        info("dom0 on %s, domU on %s: %d jobs x %d rounds x %d s each"
             % (devs["dom0"], devs["domU"], len(JOBS), rounds, seconds))
        for name, opts in JOBS:
            mbps = {"dom0": [], "domU": []}
            for r in range(rounds):
                for where in ("dom0", "domU") if r % 2 == 0 else ("domU", "dom0"):
                    v = _fio(tools, devs[where], opts, seconds, disk_mib - 32, log)
                    mbps[where].append(v)
                    print("%s round %d %s %.1f MB/s" % (name, r + 1, where, v), flush=True)
            a, b = mbps["domU"], mbps["dom0"]
            ahead = sum(1 for x, y in zip(a, b) if y > x)
            out.append("%-18s dom0 %8.1f MB/s  domU %8.1f MB/s  domU/dom0 %.3f  "
                       "dom0 ahead in %d of %d pairs"
                       % (name, statistics.median(b), statistics.median(a),
                          statistics.median(a) / statistics.median(b), ahead, rounds))
    return out
