# SPDX-License-Identifier: GPL-2.0-or-later
"""The benchmark matrix: knobs, filesystems, cells, config files."""

import itertools
from dataclasses import dataclass

from .system import BenchError, kernel_release, kernel_version_tuple

# ext3/ext4's directory hash seed, the same in every mkfs.  mke2fs draws
# a new one each time, and the kernel places a directory made in the
# root (bonnie++'s) in the block group the seed hashes its name to
# (ext4's Orlov allocator): a new seed moved bonnie++'s files anywhere
# on the disk, and with them the seeks between the journal and the data.
EXT_HASH_SEED = "6f1c4a7e-2b8d-4c51-9e0a-3d7b5f2c8a14"

FILESYSTEMS = {
    # fstype: (mkfs argv prefix, barrier on, barrier off)
    # Discard is off in mkfs so that every stack sees the same writes.
    "ext3": (["mkfs.ext3", "-F", "-q", "-E", "nodiscard,hash_seed=" + EXT_HASH_SEED],
             "barrier=1", "barrier=0"),
    "ext4": (["mkfs.ext4", "-F", "-q", "-E", "nodiscard,hash_seed=" + EXT_HASH_SEED],
             "barrier=1", "barrier=0"),
    "xfs": (["mkfs.xfs", "-f", "-q", "-K"], None, "nobarrier"),
}

# --atime: how reads update access times (mount(8)).  strictatime: every
# read writes the inode (the pre-2.6.30 default); relatime: only when
# atime is older than mtime/ctime or a day old (Linux's default);
# noatime: never.
ATIME_MODES = ("strictatime", "relatime", "noatime")
_ATIME_WORDS = set(ATIME_MODES) | {"atime", "nostrictatime", "norelatime", "lazytime",
                                   "nolazytime"}


@dataclass(frozen=True)
class FsSpec:
    """"ext3:data=journal" -> fstype ext3, options ["data=journal"]."""

    fstype: str
    options: tuple

    @classmethod
    def parse(cls, text):
        fstype, _, opts = text.partition(":")
        if fstype not in FILESYSTEMS:
            raise BenchError("unknown filesystem %r in --fs %s (known: %s)"
                             % (fstype, text, ", ".join(FILESYSTEMS)))
        return cls(fstype, tuple(o for o in opts.split(",") if o))

    def __str__(self):
        return self.fstype + (":" + ",".join(self.options) if self.options else "")

    def barrier_option(self, barrier):
        """The mount option for barrier 0/1, or None (the fs default).

        XFS lost its barrier/nobarrier options in Linux 4.19: it always
        flushes.  On such a kernel barrier 0 cannot be had, and blkbench
        says so instead of measuring something else.
        """
        on, off = FILESYSTEMS[self.fstype][1:]
        if self.fstype == "xfs" and not barrier and kernel_version_tuple() >= (4, 19):
            raise BenchError("--fs xfs with barrier 0: this kernel (%s) has no XFS "
                             "'nobarrier' mount option (removed in Linux 4.19); "
                             "use ext3/ext4 for barrier 0 cells" % kernel_release())
        return on if barrier else off

    def mkfs_argv(self, dev, inodes=0, journal_mib=0):
        """mkfs for this fs on dev; inodes: at least that many (ext3/ext4
        have a fixed inode table; XFS allocates inodes dynamically);
        journal_mib: ext3/ext4's journal size (0: mke2fs's own, which
        grows with the filesystem)."""
        extra = []
        if self.fstype.startswith("ext"):
            if inodes:
                extra += ["-N", str(inodes)]
            if journal_mib:
                extra += ["-J", "size=%d" % journal_mib]
        return FILESYSTEMS[self.fstype][0] + extra + [dev]

    def mount_options(self, barrier, extra, atime=""):
        opts = list(self.options)
        b = self.barrier_option(barrier)
        if b:
            opts.append(b)
        opts.extend(o for o in extra.split(",") if o)
        if atime:
            opts.append(atime)
        return ",".join(opts)


@dataclass(frozen=True)
class Cell:
    where: str
    wce: int
    barrier: int
    fs: FsSpec
    sched: str
    workload: str
    name: str = ""
    atime: str = ""     # "" = the filesystem's default (relatime)


def _no_duplicates(opt, text, values):
    """An axis value given twice would run its cells twice under one name."""
    seen = set()
    for v in values:
        if v in seen:
            raise BenchError("--%s %s: %s is given twice (each value of an axis is "
                             "one column of cells)" % (opt, text, v if v != "" else "''"))
        seen.add(v)
    return values


def _int_list(opt, text, allowed):
    out = []
    for x in text.split(","):
        x = x.strip()
        if x not in {str(a) for a in allowed}:
            raise BenchError("--%s %s: %r is not one of %s"
                             % (opt, text, x, ", ".join(map(str, allowed))))
        out.append(int(x))
    return _no_duplicates(opt, text, out)


def _atime_list(opts):
    text = getattr(opts, "atime", "") or ""
    modes = [a.strip() for a in text.split(",") if a.strip()]
    for a in modes:
        if a not in ATIME_MODES:
            raise BenchError("--atime %s: %r is not one of %s"
                             % (text, a, ", ".join(ATIME_MODES)))
    if modes:
        clash = [o for o in opts.mount_opts.split(",") if o.strip() in _ATIME_WORDS]
        if clash:
            raise BenchError("--mount-opts %s and --atime %s: both set access times; "
                             "give them in --atime only" % (opts.mount_opts, text))
    return _no_duplicates("atime", text, modes) or [""]


def expand(opts, where_names, workload_names):
    """Option values -> the list of cells, in the seed's order (where, wce,
    barrier as given, so "1,0" prints barrier1 before barrier0)."""
    wheres = [w.strip() for w in opts.where.split(",") if w.strip()]
    for w in wheres:
        if w not in where_names:
            raise BenchError("--where %s: unknown where %r (known: %s)"
                             % (opts.where, w, ", ".join(where_names)))
    workloads = [w.strip() for w in opts.workload.split(",") if w.strip()]
    for w in workloads:
        if w not in workload_names:
            raise BenchError("unknown workload %r in --workload %s (known: %s)"
                             % (w, opts.workload, ", ".join(workload_names)))
    _no_duplicates("where", opts.where, wheres)
    _no_duplicates("workload", opts.workload, workloads)
    wces = _int_list("wce", opts.wce, (0, 1))
    barriers = _int_list("barrier", opts.barrier, (0, 1))
    fss = [FsSpec.parse(f.strip()) for f in opts.fs.split(";") if f.strip()]
    _no_duplicates("fs", opts.fs.replace(";", " --fs "), [str(f) for f in fss])
    scheds = [s.strip() for s in opts.sched.split(",") if s.strip()] or [""]
    _no_duplicates("sched", opts.sched, scheds)
    atimes = _atime_list(opts)
    if not (wheres and workloads and fss):
        raise BenchError("empty matrix: give at least one where, fs and workload")
    if getattr(opts, "journal", 0) and any(not f.fstype.startswith("ext") for f in fss):
        raise BenchError("--journal %d: only ext3 and ext4 have a journal of a size "
                         "mkfs sets (--fs %s)" % (opts.journal, opts.fs.replace(";", " --fs ")))
    # two filesystems of one type (ext4 and ext4:data=journal) are told
    # apart by their options in the cell name
    fs_names = {str(f): f.fstype for f in fss}
    if len(set(fs_names.values())) < len(fs_names):
        fs_names = {k: k.replace(":", "-").replace(",", "-").replace("=", "")
                    for k in fs_names}

    cells = []
    for wl, fs, sched, atime, where, wce, barrier in itertools.product(
            workloads, fss, scheds, atimes, wheres, wces, barriers):
        fs.mount_options(barrier, opts.mount_opts)  # fail early on refused options
        name = "%s-wce%d-barrier%d" % (where, wce, barrier)
        if len(fss) > 1:
            name += "-" + fs_names[str(fs)]
        if len(scheds) > 1:
            name += "-" + sched
        if len(atimes) > 1:
            name += "-" + atime
        if len(workloads) > 1:
            name += "-" + wl
        cells.append(Cell(where, wce, barrier, fs, sched, wl, name, atime))
    return cells


def read_config(path, known_keys):
    """A small config file: "key = value" lines ("#" comments), keys are the
    long option names of "blkbench run".  Returns {key: value}."""
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise BenchError("--config %s: %s" % (path, e.strerror)) from None
    except UnicodeDecodeError as e:
        raise BenchError("--config %s: not UTF-8 text (byte %d)" % (path, e.start)) from None
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        key = key.strip().replace("_", "-")
        if not sep or key not in known_keys:
            raise BenchError("%s:%d: %s (known keys: %s)" % (
                path, n, "unknown key %r" % key if sep else "expected key = value",
                ", ".join(sorted(known_keys))))
        out[key] = value.strip()
    return out
