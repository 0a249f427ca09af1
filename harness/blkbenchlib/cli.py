# SPDX-License-Identifier: GPL-2.0-or-later
"""blkbench command line: run, demo, and the small helpers tests use."""

import argparse
import dataclasses
import datetime
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from . import ceiling, crash, matrix, parsers, report, xen
from .stack import WHERES
from .system import (BenchError, Cleanup, Interrupted, LoopDevice, MemCgroup,
                     detect_memory_cgroup, dmesg_tail, ext_superblock, find_tool, info,
                     install_signal_handlers, kernel_release, make_backing,
                     mount_options_of, run,
                     tool_version, umount, warn)
from .workloads import WORKLOADS, RunContext, generate_tree_tar

# Defaults of "blkbench run"; a --config file and then the command line
# override them.
RUN_DEFAULTS = {
    "where": "dom0,domU", "wce": "0,1", "barrier": "1,0",
    "fs": "ext3:data=journal", "mount-opts": "", "sched": "", "atime": "",
    "workload": "bonnie", "runs": "3", "mem": "512", "size": "", "files": "16",
    "file-size": "", "bonnie-dirs": "1",
    "bonnie-perchar": "0", "bonnie-fsync": "0", "bonnie-seeks": "", "bonnie-seed": "", "chunk": "8192", "threads": "1",
    "fsmark-files": "1000",
    "fsmark-size": "65536", "fsmark-sync": "1", "loops": "3", "fsync-count": "30",
    "scale": "1.0", "disk": "0", "timeout": "3600", "out": "", "workdir": "",
    "platform": "sim", "backing": "", "guest-kernel": "", "prefill": "sparse",
    "disk-model": "host", "warmup": "0", "journal": "0",
}
INT_KEYS = {"runs": 1, "mem": 16, "size": 1, "files": 1, "threads": 1,
            "fsmark-files": 1, "fsmark-size": 0, "fsmark-sync": 0, "loops": 1,
            "fsync-count": 1, "disk": 0, "bonnie-perchar": 0, "bonnie-fsync": 0, "chunk": 256,
            "timeout": 1, "warmup": 0, "journal": 0, "bonnie-dirs": 1}

# "blkbench demo --disk-model host": the README's main job on the host's
# disk.  8 cells x 3 runs of bonnie++
# (block output + creates) on ext3 data=journal, sized for <= 10 minutes
# on 2 cores: 96 MiB of guest memory, a 224 MiB bonnie++ file, 32k files
# of 512..2048 bytes.  bonnie++ prints "+++++" for a phase shorter than
# 0.5 s: at 192 MiB the fastest cell's block output (~380 MB/s) was
# untimed in 2 of 3 runs; 224 MiB stays timed up to 448 MB/s.  256 MiB
# took the whole demo to 9 min 31 s (each MiB costs every run's write,
# rewrite and read phases), too close to the 10 minutes it must fit.
# Empty files are created in under bonnie++'s timing threshold on an
# idle machine (48k of them took < 0.5 s: "+++++" in every
# cell); files with data, as in the seed's -n 32:100000:10, are timed
# (23-31k creates/s here); 48k files' inodes need more than 64 MiB of slab.
# On a later machine whose disk takes bonnie++'s blocks at half that
# speed (80-185 MB/s), a run takes 25 s and the demo 11-12 minutes.
# --warmup 1 adds one run per stack before round 1 (two runs, ~50 s).
DEMO = {"where": "dom0,domU", "wce": "0,1", "barrier": "1,0",
        "fs": "ext3:data=journal", "workload": "bonnie", "runs": "3",
        "mem": "96", "size": "224", "files": "32", "file-size": "2048:512",
        "disk": "640", "timeout": "300", "disk-model": "host", "warmup": "1"}
# These sizes are for "blkbench demo --disk-model host".  On the 2008
# disk one run of this bonnie++ (224 MiB, ext3 data=journal, cache off)
# did not finish in 240 s, its rewrite phase bound by seeks between the
# file, the journal and the checkpoints: 24 such runs do not fit the
# demo's 12 minutes.
#
# The demo runs on the 2008 disk by default: there the published
# findings show and its runs agree far better than on the host's disk,
# where the host's page cache and CPU, not a disk, set bonnie++'s pace.
# It sizes bonnie++ for the model
# (BENCHMARKS "The 2008 disk: a demo sized for it"): a 64 MiB file in
# 32 MiB of memory, 4096 files of 2048..4096 bytes, and no seek phase
# (-s 64:8192:0: the table does not use it, and its 8192 random reads
# took 16 s of a 33 s run at ~500 seeks/s).  One run then takes 14-32 s
# with mkfs and mount: 26 runs, the warm-ups included, in about 11
# minutes (10 min 42 s on 2 idle cores, 11 min 50 s with install and
# build).
# More files do not fit: 8192 of them outgrow 32 MiB, and bonnie++'s
# read phases then go to the disk (220 files/s: 95 s a run).
#
# A 3 MiB journal (mke2fs's own is 8 MiB on this disk) and one bonnie++
# seed make the creates agree from run to run.  With 8 MiB the journal
# filled a few times a run and each time the writer stopped to
# checkpoint ~0.5 s of scattered writes; whether one such stop fell in
# the ~1 s create phase decided its rate (2 700 or 4 800/s, idle
# machine).  A small journal checkpoints often and little, so every
# create phase pays alike; the seed gives every run the same file sizes
# and order.  2 MiB agreed better in a sweep of the dom0 cells, but a
# whole demo with it took 13 minutes and agreed no better; 4 MiB was as
# spread as 8 (BENCHMARKS "The 2008 disk: runs that agree").
#
# Files of 2 to 4 KiB, not 0.5 to 2: the page cache gives each small
# file a 4 KiB page whatever its size, so 4096 of them take the same
# memory, while each create journals twice the data and the create
# phase lasts ~3 s instead of ~1.6.  Over a longer phase the disk's
# random positioning and the host's timing average out: a wce0 cell's
# creates spread 1.03-1.14 over 4 runs, against 1.06-1.21 (BENCHMARKS
# "The 2008 disk: why the creates still spread").  6144 files made a
# run 63 s (as 8192 above), and more memory makes every block phase
# longer.
#
# The files go into 16 directories (bonnie++ -n 4:4096:2048:16), not
# one.  Traced in one directory, ~80 % of a create phase waits on the
# disk: for jbd2's checkpoint and for a handful of metadata reads, each
# queued behind the destage of the write cache for 3 to 115 ms, so a run
# is fast or slow by which waits it met.  With 16 directories the phase
# is ~20 % longer and the runs agreed better: in two demo pairs the
# cache-off cells' creates spread 1.01-1.09 against 1.04-1.15, and 10
# and 11 of the 12 create ratios stayed within 1.2 against 5 and 8
# (BENCHMARKS "The README's two commands at session 25's last code");
# three fresh-clone demos with them had 10, 12 and 10.  Why it helps
# was not traced; the demo takes no longer with them.  What still
# spread was the cache-on, barrier-off creates (up to 1.3 over 8 runs):
# their few metadata reads waited behind a cache full of destages, and
# the checkpoint's small writes filled the cache by entries.  The disk
# model now takes a read that has waited 25 ms before a destage and
# holds 256 writes at most (blkbench(1) THE 2008 DISK; BENCHMARKS "The
# 2008 disk: reads before the destage").
DEMO_2008 = {"mem": "32", "size": "64", "bonnie-seeks": "0", "files": "4",
             "file-size": "4096:2048", "disk": "256", "timeout": "120",
             "journal": "3", "bonnie-seed": "1", "bonnie-dirs": "16",
             "disk-model": "2008"}


# where --disk-model 2008 keeps the model's data (RAM)
SHM = "/dev/shm"


def _dirty_limit(mem_mib):
    """Bytes of dirty + writeback pages the guest disk may hold under
    cgroup v1 (LoopDevice.limit_dirty): --mem less 32 MiB, at least
    half of it.  What is left is for what reclaim can take or does not
    grow with --mem: clean cache, the filesystem's slab, the workload's
    own memory."""
    return max((mem_mib << 20) // 2, (mem_mib - 32) << 20)


class Tools:
    """Where programs come from: the build tree first, then the install."""

    def __init__(self, paths):
        self.dirs = paths["search"]
        self._cache = {}

    def path(self, name):
        if name not in self._cache:
            hint = {"bonnie++": "apt-get install bonnie++", "fio": "apt-get install fio",
                    "gnuplot": "apt-get install gnuplot-nox",
                    "mkfs.xfs": "apt-get install xfsprogs",
                    "fusermount3": "apt-get install fuse3"}.get(name, "build the tree with make")
            self._cache[name] = find_tool(name, self.dirs, hint)
        return self._cache[name]

    def optional(self, name):
        try:
            return self.path(name)
        except BenchError:
            return None


def _add_run_options(p):
    a = p.add_argument
    a("--platform", help="where dom0 and domU rows run: sim (default: xensim + FUSE "
      "on this machine), xen-nested (Xen 4.17 in QEMU/TCG, one boot), xen-host "
      "(this machine is a Xen dom0 running blkbackd)")
    a("--backing", help="xen-host: the LV or file both rows use (destroyed by mkfs); "
      "sim: rbd:POOL/IMAGE[:conf=PATH][:id=USER], the Ceph RBD image domU rows use "
      "(re-created for each run; dom0 and raw rows keep their file)")
    a("--guest-kernel", help="xen-host: the PV guest's kernel (default "
      "/boot/vmlinuz-$(uname -r); its /lib/modules must exist)")
    a("--where", help="comma list of: %s (default dom0,domU; xen platforms: dom0, domU)"
      % ", ".join(WHERES))
    a("--wce", help="backing write cache: 0 write-through, 1 write-back (default 0,1)")
    a("--barrier", help="guest barrier mount option and backend flush features (default 1,0)")
    a("--fs", action="append",
      help="FSTYPE[:MOUNTOPTS], repeatable: ext3:data=journal (default), ext4, xfs")
    a("--mount-opts", help="extra mount options for every cell, e.g. commit=30")
    a("--journal", help="ext3/ext4: the journal's size in MiB (mke2fs -J size=; "
      "default 0: mke2fs's own, 8 MiB on a 256 MiB disk, growing with it)")
    a("--sched", help="comma list of I/O schedulers of the guest's disk (the loop "
      "device), e.g. none,mq-deadline (default: leave the kernel's)")
    a("--atime", help="comma list of access-time modes: strictatime, relatime, noatime "
      "(default: the filesystem's, relatime)")
    a("--workload", help="comma list of: %s (default bonnie)" % ", ".join(WORKLOADS))
    a("--runs", help="runs per cell (default 3)")
    a("--mem", help="memory cgroup limit of the workload, MiB (default 512)")
    a("--size", help="bonnie++ -s and the fsync bigfile, MiB (default 2 x --mem)")
    a("--files", help="bonnie++ -n, in units of 1024 files (default 16)")
    a("--file-size", help="bonnie++ -n N:MAX:MIN: file sizes in bytes as MAX:MIN "
      "(default: empty files)")
    a("--bonnie-dirs", help="bonnie++ -n N:MAX:MIN:DIRS: the directories the files are "
      "spread over (default 1; the demo 16)")
    a("--bonnie-perchar", help="1: also run bonnie++'s per-character tests (default 0: -f)")
    a("--bonnie-fsync", help="1: bonnie++ -b, an fsync() after every write and every "
      "file created, so that each waits for the disk (default 0)")
    a("--bonnie-seeks", help="bonnie++'s random seeks (-s SIZE:CHUNK:SEEKS; default its "
      "own, 8192; 0 skips the seek phase)")
    a("--bonnie-seed", help="bonnie++ -z: the seed of its random file sizes and "
      "create order, the same in every run (default: bonnie++'s own, a new one each run)")
    a("--chunk", help="bonnie++'s block size in bytes (-s SIZE:CHUNK), a power of two "
      "from 256 to 1048576 (default 8192)")
    a("--threads", help="fsmark -t (default 1)")
    a("--fsmark-files", help="fsmark -n, files per thread per loop (default 1000)")
    a("--fsmark-size", help="fsmark -s, bytes per file (default 65536)")
    a("--fsmark-sync", help="fsmark -S sync method (default 1, fsync before close)")
    a("--loops", help="fsmark -L (default 3)")
    a("--fsync-count", help="fsync-tester -n, fsyncs per run (default 30)")
    a("--scale", help="tar tree size: 1.0 = 28 000 files, 300 MB (default 1.0)")
    a("--disk", help="backing file size, MiB (default: enough for the workload)")
    a("--disk-model", help="sim: the disk both rows' backing is: host (a file "
      "on the host's disk, at its speed; run's default) or 2008 (demo's default on "
      "sim: blkbackd's disk2008 store, a 7200 rpm SATA disk of 2008 with a 16 MiB "
      "write cache, its data in RAM under /dev/shm; blkbench(1) THE 2008 DISK)")
    a("--warmup", help="sim: 1 = before the first round, one run per stack (where) of "
      "its first cell, shown in the report and results.json (warmup: true) but not "
      "counted in any mean or ratio (default 0; the demo 1)")
    a("--prefill", help="sim: the backing file of each run: sparse (default: "
      "truncated, every first write allocates) or zero (written with zeros first, "
      "like a disk: no allocation during the workload)")
    a("--timeout", help="seconds a run's workload may take before it is stopped and the "
      "run fails (default 3600)")
    a("--config", help="a file of 'key = value' lines (keys: these long options)")
    a("--out", help="results directory (default results/<timestamp>)")
    a("--workdir", help="where backing files and mountpoints live (default $TMPDIR or /var/tmp)")


def _parse_scale(v):
    """--scale of the tar tree (run and gen-tree alike): a number in (0, 10]."""
    try:
        scale = float(v)
    except ValueError:
        raise BenchError("--scale %s: not a number" % v) from None
    if not 0 < scale <= 10:  # also refuses nan and inf
        raise BenchError("--scale %s: must be in (0, 10]" % v)
    return scale


def _resolve_options(ns, defaults):
    """defaults < --config < command line -> an object with attributes."""
    values = dict(defaults)
    if getattr(ns, "config", None):
        values.update(matrix.read_config(ns.config, set(RUN_DEFAULTS)))
    for key in RUN_DEFAULTS:
        v = getattr(ns, key.replace("-", "_"), None)
        if v is not None:
            values[key] = ";".join(v) if isinstance(v, list) else v

    class Opts:
        pass
    o = Opts()
    for key, v in values.items():
        attr = key.replace("-", "_")
        if key == "size" and v == "":
            o.size = 0	# not given: 2 x --mem
        elif key in ("bonnie-seed", "bonnie-seeks"):
            # not given: None, bonnie++'s own
            if v != "" and not re.fullmatch(r"\d+", v):
                raise BenchError("--%s %s: not a whole number" % (key, v))
            setattr(o, attr, int(v) if v != "" else None)
        elif key in INT_KEYS:
            try:
                iv = int(v)
            except ValueError:
                raise BenchError("--%s %s: not a whole number" % (key, v)) from None
            if iv < INT_KEYS[key]:
                raise BenchError("--%s %s: must be at least %d" % (key, v, INT_KEYS[key]))
            setattr(o, attr, iv)
        elif key == "file-size":
            o.file_size = None
            if v:
                m = re.fullmatch(r"(\d+):(\d+)", v)
                if not m or int(m.group(1)) < int(m.group(2)):
                    raise BenchError("--file-size %s: want MAX:MIN in bytes, MAX >= MIN" % v)
                o.file_size = (int(m.group(1)), int(m.group(2)))
        elif key == "disk-model":
            if v not in ("host", "2008"):
                raise BenchError("--disk-model %s: host or 2008" % v)
            o.disk_model = v
        elif key == "prefill":
            if v not in ("sparse", "zero"):
                raise BenchError("--prefill %s: sparse or zero" % v)
            o.prefill = v
        elif key == "scale":
            o.scale = _parse_scale(v)
        else:
            setattr(o, attr, v)
    for flag in ("bonnie_fsync", "bonnie_perchar", "warmup"):
        if getattr(o, flag) > 1:
            raise BenchError("--%s %d: 0 or 1" % (flag.replace("_", "-"), getattr(o, flag)))
    if o.chunk > 1 << 20 or o.chunk & (o.chunk - 1):
        raise BenchError("--chunk %d: bonnie++ takes a power of two from 256 to 1048576"
                         % o.chunk)
    # said now, not after the stacks are set up
    if o.size and "bonnie" in re.split(r"[,;]", o.workload) and o.size < 2 * o.mem:
        raise BenchError("--size %d: bonnie++ needs at least twice --mem (%d MiB)"
                         % (o.size, 2 * o.mem))
    return o


def _disk_mib(o, workloads):
    need = 0
    for w in workloads:
        if w == "bonnie":
            need = max(need, 2 * (o.size or 2 * o.mem) + o.files + 64)
        elif w == "fsync":
            need = max(need, 2 * (o.size or 2 * o.mem))
        elif w == "tar":
            need = max(need, int(700 * o.scale))
        elif w == "fsmark":
            need = max(need, o.fsmark_files * o.fsmark_size * o.threads * o.loops * 2 >> 20)
    if o.disk:
        if o.disk < need:
            warn("--disk %d MiB is less than the %d MiB the workload may need"
                 % (o.disk, need))
        return o.disk
    return max(512, need + 256)


def _fresh_rbd(spec, mib, log):
    """--backing rbd:POOL/IMAGE[:conf=PATH][:id=USER] (blkbackd's params,
    QEMU's spelling): remove the image and create it again, MIB MiB and
    empty (RBD images are thin: the "sparse" prefill).  Returns spec, the
    params of the run's vbd."""
    words = spec[len("rbd:"):].split(":")
    image, argv = words[0], ["rbd"]
    if "@" in image or "/" not in image:
        raise BenchError("--backing %s: not rbd:POOL/IMAGE (a snapshot is read-only)" % spec)
    for w in words[1:]:
        k, _, v = w.partition("=")
        if k == "conf":
            argv += ["-c", v]
        elif k == "id":
            argv += ["--id", v]
    t0 = time.monotonic()
    run(argv + ["rm", "--no-progress", image], log=log, check=False, timeout=120)
    p = run(argv + ["create", "--size", "%dM" % mib, image], log=log, check=False,
            timeout=120)
    if p.returncode != 0:
        raise BenchError("--backing %s: rbd create failed: %s" % (spec, p.stderr.strip()))
    log.write("# backing %s: RBD image of %d MiB, re-created (%.1f s)\n"
              % (spec, mib, time.monotonic() - t0))
    log.flush()
    return spec


def _new_results_dir(started):
    """results/YYYYmmdd-HHMMSS, or with -2, -3... when that exists: two
    runs started in the same second never share a directory (made here,
    atomically, so a concurrent blkbench cannot take it too)."""
    base = os.path.join("results", started.strftime("%Y%m%d-%H%M%S"))
    try:
        os.makedirs("results", exist_ok=True)
    except OSError as e:
        raise BenchError("cannot create results/ in %s: %s (use --out)"
                         % (os.getcwd(), e.strerror)) from None
    for n in range(1, 1000):
        path = base if n == 1 else "%s-%d" % (base, n)
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
        except OSError as e:
            raise BenchError("cannot create %s: %s (use --out)" % (path, e.strerror)) from None
    raise BenchError("results/: 999 directories for %s already (use --out)" % base)


def _git_rev(srcdir):
    if not srcdir:  # an installed blkbench: no tree to ask
        return "unknown"
    try:
        rev = subprocess.run(["git", "-C", srcdir, "rev-parse", "--short", "HEAD"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", srcdir, "status", "--porcelain", "-uno"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True).stdout.strip()
        return (rev + ("-dirty" if dirty else "")) if rev else "unknown"
    except OSError:
        return "unknown"


def _fmt_secs(s):
    s = int(s)
    return "%d:%02d" % (s // 60, s % 60) if s < 3600 else "%d:%02d:%02d" % (
        s // 3600, s // 60 % 60, s % 60)


def _round_order(cells, r):
    """Round r's order of the cells, as (number, cell) with the cell's
    number in the matrix: cells that differ only in where (dom0 and domU
    of one wce, barrier, filesystem...) run one after the other, first
    one way round, then the other in the next round.  The host disk's
    speed drifts within minutes here (one 128 KiB write job on a fresh
    dom0 stack per run: 609-1214 MB/s over half an hour), so the two
    runs that a domU/dom0 ratio divides should be seconds apart, not
    half a round of the matrix."""
    groups = {}
    for k, c in enumerate(cells, 1):
        # the cell with where (and the name made from it) left out
        groups.setdefault(dataclasses.replace(c, where="", name=""), []).append((k, c))
    out = []
    for g in groups.values():
        out.extend(g if r % 2 else reversed(g))
    return out


class Bench:
    """One invocation of "blkbench run" (or demo): the matrix, its results."""

    def __init__(self, opts, paths, argv, show_runs=True):
        self.o, self.paths, self.argv = opts, paths, argv
        self.show_runs = show_runs
        self.tools = Tools(paths)
        fs_specs = [f for f in opts.fs.split(";") if f.strip()]
        opts.fs = ";".join(fs_specs)
        self.platform = xen.platform(self)
        self.cells = matrix.expand(opts, list(WHERES) if self.platform is None else
                                   ["dom0", "domU"], list(WORKLOADS))
        self.workloads = {c.workload: WORKLOADS[c.workload]() for c in self.cells}
        self.wheres = {c.where: WHERES[c.where](self.tools) for c in self.cells} \
            if self.platform is None else {}
        self.disk_mib = _disk_mib(opts, self.workloads)
        self.rows = []
        self.warmups = []
        self.runs_by_cell = {}
        self.bonnie_lines = []

    # -- checks before anything is touched ----------------------------------
    def preflight(self):
        if self.o.disk_model == "2008":
            if self.platform is not None:
                raise BenchError("--disk-model 2008: only with --platform sim (the "
                                 "xen platforms' rows do not run blkbackd's stores on "
                                 "both sides)")
            if "raw" in {c.where for c in self.cells}:
                raise BenchError("--disk-model 2008: where=raw has no store to model "
                                 "the disk in; use dom0 and domU")
            if self.o.backing:
                raise BenchError("--disk-model 2008 and --backing %s: the model keeps "
                                 "its data in RAM, not in another backing" % self.o.backing)
            if not os.path.isdir(SHM):
                raise BenchError("--disk-model 2008: no %s for the model's data" % SHM)
        if self.platform is not None:
            # the workload's own programs are copied into the guests
            for w in self.workloads.values():
                for name in w.programs:
                    self.tools.path(name)
            self.platform.preflight()
            self.cgroup_kind = ("v2", None)
            return
        if os.geteuid() != 0:
            raise BenchError("blkbench run needs root (loop devices, mount, cgroups)")
        needed = {"losetup", "mount", "umount"}
        for c in self.cells:
            needed.add(c.fs.mkfs_argv("x")[0])
        for w in self.workloads.values():
            needed.update(w.programs)
        for w in self.wheres.values():
            needed.update(w.programs)
        for name in sorted(needed):
            self.tools.path(name)
        for w in self.wheres.values():
            w.probe()
        self.cgroup_kind = detect_memory_cgroup()

    # -- one run of one cell ---------------------------------------------------
    def _check_backing_room(self, where):
        """Can a backing file of disk_mib MiB be made in where?  Said
        before the first run, naming the options that sized it, rather
        than a bare "File too large" from inside a run: a file larger
        than the file system allows (EFBIG: ext4's 16 TiB) or than any
        file can be (2^63 bytes), or, with --prefill zero (every block
        written), more than it has free."""
        mib = self.disk_mib
        why = "set by --disk %d" % self.o.disk if self.o.disk else \
            "what the workloads need with --size %d, --scale %g; --disk sets it" % (
                self.o.size or 2 * self.o.mem, self.o.scale)
        probe = os.path.join(where, "backing-size-probe")
        try:
            with open(probe, "wb") as f:
                f.truncate(mib << 20)
        except (OSError, OverflowError) as e:
            raise BenchError("a backing file of %d MiB cannot be made in %s: %s (its size: %s)"
                             % (mib, where, getattr(e, "strerror", None) or
                                "larger than any file can be", why)) from None
        finally:
            try:
                os.unlink(probe)
            except OSError:
                pass
        st = os.statvfs(where)
        free = st.f_bavail * st.f_frsize >> 20
        if self.o.prefill == "zero" and mib > free:
            raise BenchError("--prefill zero: a backing file of %d MiB is more than the "
                             "%d MiB free in %s (its size: %s)" % (mib, free, where, why))

    def run_one(self, k, cell, r, outdir, workdir):
        tag = "%d-%d" % (k, r)
        rundir = os.path.join(outdir, "raw", "%s-run%d" % (cell.name, r))
        os.makedirs(rundir, exist_ok=True)
        tmp = os.path.join(workdir, tag)
        os.makedirs(tmp)
        row = {"cell": cell.name, "run": r, "where": cell.where, "wce": cell.wce,
               "barrier": cell.barrier, "fs": str(cell.fs),
               "mount_opts": "", "sched": cell.sched, "atime": cell.atime,
               "workload": cell.workload,
               "mem_mib": self.o.mem, "size_mib": self.o.size or 2 * self.o.mem,
               "disk_mib": self.disk_mib}
        t0 = time.monotonic()
        with open(os.path.join(rundir, "commands.log"), "w") as log, Cleanup() as cl:
            cl.push("remove %s" % tmp, shutil.rmtree, tmp, True)
            if self.o.disk_model == "2008":
                # the model's data in RAM: the host's disk plays no part
                shm = os.path.join(self.shm_dir, tag)
                os.makedirs(shm)
                cl.push("remove %s" % shm, shutil.rmtree, shm, True)
                backing = os.path.join(shm, "backing.img")
            else:
                backing = os.path.join(tmp, "backing.img")
            make_backing(backing, self.disk_mib, self.o.prefill, log)
            row["prefill"] = self.o.prefill
            row["disk_model"] = self.o.disk_model
            if self.o.disk_model == "2008":
                # blkbackd's disk2008 store, in either row (blkbench(1))
                backing = "disk2008:" + backing
                row["backing"] = "disk2008"
            elif self.o.backing.startswith("rbd:") and cell.where == "domU":
                # blkbackd serves the ring from the cluster instead
                backing = _fresh_rbd(self.o.backing, self.disk_mib, log)
                row["backing"] = "rbd"
            else:
                row["backing"] = "file"
            disk = self.wheres[cell.where].start(cell, tmp, backing, cl, log, rundir)
            row.update(disk.row)

            loop = LoopDevice(disk.path, log)
            cl.push("detach %s" % loop.dev, loop.detach)
            row["loop_dio"] = int(loop.dio)
            # the loop device is the guest's disk: its kernel flushes it
            # only if its driver says it has a volatile cache
            log.write("# guest disk write_cache %s: %s\n" % (disk.write_cache, disk.why))
            loop.set_write_cache(disk.write_cache, log)
            row["loop_write_cache"] = loop.write_cache()
            if cell.sched:
                loop.set_scheduler(cell.sched)
            row["sched"] = loop.schedulers()[1] or ""
            if self.cgroup_kind[0] == "v1":
                row["loop_nr_requests"], row["loop_max_sectors_kb"] = \
                    loop.limit_inflight((self.o.mem << 20) // 4)
                row["loop_dirty_max_bytes"] = loop.limit_dirty(_dirty_limit(self.o.mem), log)

            # bonnie++ -n N makes N*1024 files at once: room for them all
            inodes = self.o.files * 1024 + 16384 if cell.workload == "bonnie" else 0
            run(cell.fs.mkfs_argv(loop.dev, inodes, self.o.journal), log=log)
            if cell.fs.fstype.startswith("ext"):
                sb = ext_superblock(loop.dev)
                row["journal_mib"], row["ext_hash_seed"] = sb["journal_mib"], sb["hash_seed"]
            mnt = os.path.join(tmp, "mnt")
            os.mkdir(mnt)
            mopts = cell.fs.mount_options(cell.barrier, self.o.mount_opts, cell.atime)
            row["mount_opts"] = mopts
            argv = ["mount", "-t", cell.fs.fstype] + (["-o", mopts] if mopts else []) + [
                loop.dev, mnt]
            p = run(argv, log=log, check=False)
            if p.returncode != 0:
                why = " ".join(p.stderr.split()) or "exit %d" % p.returncode
                raise BenchError("mount -t %s -o %s %s: refused by the kernel: %s (dmesg: %s)"
                                 % (cell.fs.fstype, mopts, loop.dev, why, dmesg_tail(1)))
            # what the kernel applied (an atime mode, a barrier option)
            row["mounted_opts"] = mount_options_of(mnt)
            cg = MemCgroup(self.o.mem, tag)
            cl.push("umount %s" % mnt, umount, mnt, cg)
            cl.push("remove cgroup %s" % cg.path, cg.destroy)
            row["cgroup"] = cg.version

            ctx = RunContext(cell, self.o, self.tools, mnt, cg, rundir, log, workdir)
            metrics, text, csvline = self.workloads[cell.workload].run(ctx)
            row["cgroup_peak_mib"] = (cg.peak_bytes() or 0) >> 20
        row["elapsed_s"] = round(time.monotonic() - t0, 3)
        row.update(metrics)
        if csvline:
            self.bonnie_lines.append(csvline)
        if self.show_runs:
            print("== %s run %d (%s)" % (cell.name, r, cell.workload))
            print(text, end="", flush=True)
        return row

    # -- the whole matrix --------------------------------------------------------
    def execute(self):
        self.preflight()
        started = datetime.datetime.now()
        outdir = self.o.out or _new_results_dir(started)
        try:
            os.makedirs(os.path.join(outdir, "raw"), exist_ok=True)
        except OSError as e:
            raise BenchError("--out %s: cannot create the results directory: %s"
                             % (outdir, e.strerror)) from None
        self.outdir = outdir
        base = self.o.workdir or os.environ.get("TMPDIR") or "/var/tmp"
        self.shm_dir = None
        try:
            workdir = tempfile.mkdtemp(prefix="blkbench.", dir=base)
        except OSError as e:
            raise BenchError("%s %s: cannot make a work directory there: %s"
                             % ("--workdir" if self.o.workdir else "TMPDIR", base,
                                e.strerror)) from None
        self.meta = {
            "command": " ".join(shlex.quote(a) for a in self.argv),
            "started": started.isoformat(timespec="seconds"),
            "kernel": kernel_release(), "git_rev": _git_rev(self.paths["srcdir"]),
            "cgroup": self.cgroup_kind[0], "disk_mib": self.disk_mib,
            "tools": self._tool_versions(),
            "platform": self.o.platform, "disk_model": self.o.disk_model,
        }
        if self.cgroup_kind[0] == "v1":
            info("cgroup v1: no per-cgroup dirty throttling, so the loop device's queue "
                 "is limited to %d KiB in flight (a quarter of --mem) and its writers "
                 "to %d KiB dirty (--mem less 32 MiB, at least half) in every cell"
                 % ((self.o.mem << 10) // 4, _dirty_limit(self.o.mem) >> 10))
        total = len(self.cells) * self.o.runs
        done, t_start = 0, time.monotonic()
        if self.o.disk_model == "2008":
            self.shm_dir = tempfile.mkdtemp(prefix="blkbench.", dir=SHM)
        info("%d cells x %d runs, results in %s" % (len(self.cells), self.o.runs, outdir))
        try:
            self._check_backing_room(self.shm_dir or workdir)
            if self.platform is not None:
                self.platform.run_all(outdir, workdir, self._add_row)
                return
            if self.o.warmup:
                # one run per stack before round 1: its first run after
                # start (cold caches, a fresh daemon) is shown, not counted
                firsts = {}
                for k, cell in enumerate(self.cells, 1):
                    firsts.setdefault(cell.where, (k, cell))
                for k, cell in firsts.values():
                    info("[warm-up] %s: run 0, reported, not counted" % cell.name)
                    row = self.run_one(k, cell, 0, outdir, workdir)
                    row["warmup"] = True
                    row.setdefault("kernel", self.meta["kernel"])
                    row["git_rev"] = self.meta["git_rev"]
                    self.rows.append(row)
                    self.warmups.append(row)
            # round by round (run 1 of every cell, then run 2...): a drift
            # of the machine (other load, the host's caches) then falls on
            # every cell alike instead of on the cells run last
            for r in range(1, self.o.runs + 1):
                for k, cell in _round_order(self.cells, r):
                    el = time.monotonic() - t_start
                    eta = ("%s" % _fmt_secs(el / done * (total - done))) if done else "?"
                    info("[cell %d/%d run %d/%d] %s: elapsed %s, ETA %s"
                         % (k, len(self.cells), r, self.o.runs, cell.name, _fmt_secs(el), eta))
                    row = self.run_one(k, cell, r, outdir, workdir)
                    self._add_row(cell, row)
                    done += 1
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            if self.shm_dir:
                shutil.rmtree(self.shm_dir, ignore_errors=True)
            if self.rows:
                self.meta["elapsed_s"] = round(time.monotonic() - t_start, 1)
                self.write_results()

    def _add_row(self, cell, row, text=None, csvline=None):
        """A finished run's row; text and csvline from a platform's run
        (sim's run_one prints and records its own)."""
        row.setdefault("kernel", self.meta["kernel"])  # a platform's guest kernel
        row["git_rev"] = self.meta["git_rev"]
        row.update({"tool_" + t: v for t, v in self.meta["tools"].items()})
        self.rows.append(row)
        self.runs_by_cell.setdefault(cell.name, []).append(row)
        if csvline:
            self.bonnie_lines.append(csvline)
        if text is not None and self.show_runs:
            print("== %s run %d (%s, %s)" % (cell.name, row["run"], cell.workload,
                                              self.o.platform))
            print(text, end="", flush=True)

    def _tool_versions(self):
        v = {}
        progs = set()
        for w in self.workloads.values():
            progs.update(w.programs)
        for w in self.wheres.values():
            progs.update(w.programs)
        for name in sorted(progs):
            if name == "bonnie++":
                p = run(["dpkg-query", "-W", "-f", "${Version}", "bonnie++"], check=False)
                v[name] = p.stdout.strip() or "unknown"
            elif name in ("dd", "rm", "sync", "tar", "xenstore-read"):
                continue
            elif name in ("fsmark", "fsync-tester"):
                v[name] = self.paths["version"]
            else:
                v[name] = tool_version(self.tools.path(name))
        if self.platform is not None:
            v.update(self.platform.tool_versions())
        for c in self.cells:
            mk = c.fs.mkfs_argv("x")[0]
            if mk not in v:
                p = run([self.tools.path(mk), "-V"], check=False)
                v[mk] = ((p.stdout + p.stderr).strip().splitlines() or ["unknown"])[0]
        return v

    def tables(self):
        """The summary tables (one per workload) and the ratios, as text."""
        out = []
        for wname, w in self.workloads.items():
            cells = [c for c in self.cells if c.workload == wname]
            cols = w.metrics[:2]
            if len(self.workloads) > 1:
                out.append("# %s" % wname)
            out.append(report.summary_table(cells, self.runs_by_cell, cols, w.formats))
            dashes = [c for c in cols if any(r.get(c) is None for cell in cells
                                             for r in self.runs_by_cell.get(cell.name, []))]
            if dashes:
                out.append("-: %s\n" % w.dash_means(dashes))
            lines, unmeasured = report.ratios(cells, self.runs_by_cell, cols)
            if lines:
                out.append("\n".join(report.ratio_notes(cols, lines) + lines))
            if unmeasured:
                out.append("no ratio for %s where a cell has no value (-)"
                           % ", ".join(unmeasured))
            out.extend(report.outliers(cells, self.runs_by_cell, cols))
            out.extend(report.warmup_lines([r for r in self.warmups
                                            if r["workload"] == wname], cols))
            if wname == "bonnie":
                found = report.published_findings(cells, self.runs_by_cell)
                if found:
                    out.append("")
                    out.extend(found)
                    if len({c.where for c in cells}) > 1:
                        out.append("domU/dom0: the published text gives no ratio to "
                                   "compare; ours are in the ratios above")
            if lines and self.o.runs < 3:
                out.append("warning: %d run%s per cell: the range shows no spread of the "
                           "machine; use --runs 3 or more before reading a ratio"
                           % (self.o.runs, "" if self.o.runs == 1 else "s"))
            out.append("")
        return "\n".join(out)

    def write_results(self):
        o = self.outdir
        report.write_csv_json(o, self.rows, self.meta)
        report.write_bonnie_csv(o, self.bonnie_lines)
        metrics = []
        for w in self.workloads.values():
            metrics.extend(m for m in w.metrics if m not in metrics)
        plots = report.plot_metrics(o, self.cells, self.runs_by_cell, metrics,
                                    self.tools.optional("gnuplot"))
        text = self.tables()
        with open(os.path.join(o, "table.txt"), "w") as f:
            f.write(text)
        report.write_html(o, "blkbench results", text, plots, self.meta)


def _print_error(e):
    print("blkbench: error: %s" % e, file=sys.stderr, flush=True)


def cmd_run(ns, paths, argv, defaults=None, show_runs=True):
    o = _resolve_options(ns, defaults or RUN_DEFAULTS)
    b = Bench(o, paths, argv, show_runs=show_runs)
    b.execute()
    print(b.tables(), end="", flush=True)
    info("results: %s (index.html, results.csv, results.json%s)"
         % (b.outdir, ", bonnie.csv" if b.bonnie_lines else ""))
    return b


def _crash_campaign(paths, outdir):
    """The durability issue's short power-cut campaign (blkcrash run
    --quick), when blkcrash is built; its one-line verdict on stdout, its
    whole output in OUTDIR/crash.txt."""
    blkcrash = None
    for d in paths["search"]:
        p = os.path.join(d, "blkcrash")
        if os.access(p, os.X_OK):
            blkcrash = p
            break
    blkcrash = blkcrash or shutil.which("blkcrash")
    if not blkcrash:
        print("power-cut check: not available (blkcrash is not built)")
        return 0
    p = subprocess.run([blkcrash, "run", "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0 or "--quick" not in p.stdout:
        print("power-cut check: not available ('%s run --quick' is not offered: %s)"
              % (blkcrash, (p.stdout.strip().splitlines() or ["no output"])[-1]))
        return 0
    info("power-cut campaign: %s run --quick (output in %s/crash.txt)" % (blkcrash, outdir))
    with open(os.path.join(outdir, "crash.txt"), "w") as f:
        p = subprocess.run([blkcrash, "run", "--quick"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        f.write(p.stdout)
    lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
    last = lines[-1] if lines else "no output"
    report.append_html(outdir, "Power-cut check (blkcrash run --quick)",
                       "%s\n(exit %d; full output: crash.txt)" % (last, p.returncode),
                       "crash.txt")
    if p.returncode == 0:
        print("power-cut check: %s" % last)
        return 0
    if p.returncode == 1:
        print("power-cut check: FAILED: %s" % last)
    else:
        print("power-cut check: could not run (blkcrash exit %d): %s" % (p.returncode, last))
    return 1


def cmd_demo(ns, paths, argv):
    """On the simulator the demo runs on the 2008 disk unless
    --disk-model host (or --backing) asks for another, each with bonnie++
    sized for its disk; the xen platforms' rows have their own disks."""
    defaults = dict(RUN_DEFAULTS)
    defaults.update(DEMO)
    # what the command line or else the --config file says
    conf = matrix.read_config(ns.config, set(RUN_DEFAULTS)) if ns.config else {}
    model = ns.disk_model or conf.get("disk-model")
    sim = (ns.platform or conf.get("platform") or "sim") == "sim"
    if model == "2008" or (model is None and sim and not (ns.backing or conf.get("backing"))):
        defaults.update(DEMO_2008)
    b = cmd_run(ns, paths, argv, defaults, show_runs=False)
    return _crash_campaign(paths, b.outdir)


def cmd_parse(ns):
    """Print what the parsers make of a recorded output (for tests)."""
    with open(ns.file, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise parsers.ParseError("%s: not text (byte %d is 0x%02x): not a recorded %s "
                                 "output" % (ns.file, e.start, data[e.start], ns.kind)) from None
    if not text.strip():
        raise parsers.ParseError("%s: empty: no %s output in it" % (ns.file, ns.kind))
    if ns.kind == "bonnie":
        for rec in parsers.parse_bonnie_csv(text):
            m = parsers.bonnie_metrics(rec)
            print("format=%s version=%s name=%s size=%s " % (
                rec["format_version"], rec["bonnie_version"], rec["name"], rec["file_size"]) +
                " ".join("%s=%s" % (k, "none" if v is None else "%g" % v) for k, v in m.items()))
            print(parsers.render_bonnie_table(rec), end="")
    elif ns.kind == "fsmark":
        rows = parsers.parse_fsmark(text)
        for r in rows:
            print(" ".join("%s=%g" % kv for kv in r.items()))
        print(parsers.render_fsmark_table(rows), end="")
    elif ns.kind == "fsync":
        s = parsers.fsync_summary(parsers.parse_fsync(text))
        print(" ".join("%s=%g" % kv for kv in s.items()))
    elif ns.kind == "time":
        for line in text.splitlines():
            if line.strip():
                t = parsers.parse_time_line(line)
                print("command=%r user=%g system=%g cpu=%d real=%g" % (
                    t["command"], t["user"], t["system"], t["cpu"], t["real"]))
                print(parsers.format_time_line(t["command"], t["user"], t["system"], t["real"]))
    return 0


def cmd_probe(ns, paths):
    """Exit 0 if every named where can run here, 77 with the reason when
    one cannot (a program or a facility missing).

    --io also runs the stack: ext4, dd 64 MiB + sync through it within
    60 s.  A stack that can run here but fails that is broken, not
    missing: exit 1, so that a test never skips what it should catch."""
    tools = Tools(paths)
    for name in ns.where.split(","):
        if name not in WHERES:
            raise BenchError("unknown where %r (known: %s)" % (name, ", ".join(WHERES)))
        w = WHERES[name](tools)
        try:
            for prog in w.programs:
                tools.path(prog)
            w.probe()
        except BenchError as e:
            print("%s: not available: %s" % (name, e))
            return 77
        if ns.io:
            try:
                _probe_io(name, paths)
            except BenchError as e:
                print("%s: broken: I/O through it failed: %s" % (name, e))
                return 1
        print("%s: available%s" % (name, " (I/O through it works)" if ns.io else ""))
    return 0


def _probe_io(where, paths):
    defaults = dict(RUN_DEFAULTS)
    defaults.update({"where": where, "wce": "1", "barrier": "1", "fs": "ext4",
                     "workload": "dd", "runs": "1", "mem": "64", "size": "64",
                     "disk": "300", "timeout": "60"})
    base = os.environ.get("TMPDIR") or "/var/tmp"
    out = tempfile.mkdtemp(prefix="blkbench-probe.", dir=base)
    try:
        class NS:
            config = None
        ns = NS()
        for key in RUN_DEFAULTS:
            setattr(ns, key.replace("-", "_"), None)
        ns.out, ns.workdir = out + "/res", out
        o = _resolve_options(ns, defaults)
        b = Bench(o, paths, ["blkbench", "probe", "--io", where], show_runs=False)
        try:
            b.execute()
        except BenchError as e:
            # the stack's own complaint says more than the workload's
            for log in sorted(glob.glob(os.path.join(out, "res", "raw", "*", "*.log"))):
                with open(log) as f:
                    errs = [ln.strip() for ln in f if "error" in ln and not ln.startswith("$")]
                if errs:
                    raise BenchError("%s; %s says: %s" % (e, os.path.basename(log), errs[0])) from None
            raise
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main(argv, paths):
    ap = argparse.ArgumentParser(
        prog="blkbench",
        description="dom0/domU block benchmark matrix (bonnie++, fs_mark, fsync, tar/rm).")
    ap.add_argument("--version", action="version", version="blkbench " + paths["version"])
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    p_run = sub.add_parser("run", help="run a benchmark matrix")
    _add_run_options(p_run)
    p_demo = sub.add_parser("demo", help="the main job: the seed's barrier table, then "
                            "the power-cut check")
    _add_run_options(p_demo)
    p_parse = sub.add_parser("parse", help="parse a recorded tool output (tests)")
    p_parse.add_argument("kind", choices=["bonnie", "fsmark", "fsync", "time"])
    p_parse.add_argument("file")
    p_probe = sub.add_parser("probe", help="can these wheres run here? (exit 0, or 77)")
    p_probe.add_argument("--io", action="store_true",
                         help="also write 64 MiB through the stack (ext4, dd + sync)")
    p_probe.add_argument("where")
    p_ceil = sub.add_parser("ceiling", help="is dom0 the ceiling of domU? fio on the bare "
                            "disks of both stacks, in turn (a benchmark)")
    p_ceil.add_argument("--rounds", type=int, default=6, help="runs of each job per stack "
                        "(default 6)")
    p_ceil.add_argument("--seconds", type=int, default=5, help="per run (default 5)")
    p_ceil.add_argument("--wce", type=int, choices=(0, 1), default=1,
                        help="the backing's write cache (default 1)")
    p_ceil.add_argument("--disk", type=int, default=640, help="each backing, MiB (default 640)")
    p_ceil.add_argument("--workdir", help="where the backings go (default $TMPDIR or /var/tmp)")
    p_crash = sub.add_parser("crash", help="the power-cut campaign: each backend's "
                             "flushes judged from below it (sim: blkcrash run; xen-nested: "
                             "dm-log-writes under blkbackd, kernel blkback and qdisk)")
    p_crash.add_argument("--platform", default="sim",
                         help="sim (default), xen-nested (one boot of Xen in QEMU/TCG) "
                         "or xen-host")
    p_crash.add_argument("--points", type=int, default=64,
                         help="xen-nested: crash points per ext4 round (default 64)")
    p_crash.add_argument("--quick", action="store_true",
                         help="sim: the demo's short campaign (blkcrash run --quick)")
    p_crash.add_argument("--timeout", type=int, default=0,
                         help="xen-nested: the boot's bound in seconds (default 2400)")
    p_crash.add_argument("--data", help="xen-host: the data device, a spare LV of 64 MiB "
                         "to 4 GiB (destroyed)")
    p_crash.add_argument("--log", help="xen-host: the dm-log-writes log device, another "
                         "spare LV (destroyed)")
    p_crash.add_argument("--backends", help="xen-host: comma list of blkbackd, "
                         "kernel-blkback, qdisk (default: those this host runs)")
    p_crash.add_argument("--guest-kernel", help="xen-host: the guests' kernel (default "
                         "/boot/vmlinuz-$(uname -r))")
    p_crash.add_argument("--console", help="xen platforms: judge a recorded run's console "
                         "(serial.log) again instead of running")
    p_crash.add_argument("--out", help="results directory (default results/DATE-TIME)")
    p_crash.add_argument("--workdir", help="scratch directory (default $TMPDIR or /var/tmp)")
    p_tree = sub.add_parser("gen-tree", help="write the tar/rm workload's tree as a tar")
    p_tree.add_argument("--scale", default="1.0",
                        help="1.0 = 28 000 files, 300 MB; in (0, 10] (default 1.0)")
    p_tree.add_argument("file")
    ns = ap.parse_args(argv[1:])
    if not ns.cmd:
        ap.print_help(sys.stderr)
        return 2

    install_signal_handlers()
    try:
        if ns.cmd == "run":
            cmd_run(ns, paths, argv)
            return 0
        if ns.cmd == "demo":
            return cmd_demo(ns, paths, argv)
        if ns.cmd == "parse":
            return cmd_parse(ns)
        if ns.cmd == "crash":
            return crash.cmd_crash(ns, paths, Tools(paths), _new_results_dir,
                                   datetime.datetime.now())
        if ns.cmd == "probe":
            return cmd_probe(ns, paths)
        if ns.cmd == "ceiling":
            lines = ceiling.ceiling(Tools(paths), ns.rounds, ns.seconds, ns.wce, ns.disk,
                                    ns.workdir or os.environ.get("TMPDIR") or "/var/tmp")
            print("\n".join(lines))
            return 0
        if ns.cmd == "gen-tree":
            f, d, b = generate_tree_tar(ns.file, _parse_scale(ns.scale))
            print("%d files %d dirs %d bytes" % (f, d, b))
            return 0
    except BenchError as e:
        _print_error(e)
        return 1
    except parsers.ParseError as e:
        _print_error(e)
        return 1
    except OSError as e:
        # a file or directory blkbench was given or made: say which, no
        # traceback (everything set up was torn down on the way out)
        _print_error("%s%s" % ("%s: " % e.filename if e.filename else "",
                               e.strerror or e))
        return 1
    except (KeyboardInterrupt, Interrupted) as e:
        _print_error("interrupted (%s); everything blkbench set up was torn down"
                     % (str(e) or "SIGINT"))
        return 130
    return 0
