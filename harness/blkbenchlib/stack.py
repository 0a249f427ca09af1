# SPDX-License-Identifier: GPL-2.0-or-later
"""The "where" step: what stands between the guest filesystem and the backing.

Each Where turns a fresh backing file into a disk image file (a GuestDisk)
that blkbench then attaches with `losetup --direct-io=on`, formats and
mounts.  The GuestDisk also says what the guest kernel's queue/write_cache
must be, which blkbench sets on the loop device: the loop device plays the
guest's disk, and the kernel sends flushes only to a disk with a volatile
cache ("write back"):

  dom0   blkfront-test export --direct BACKING: the same FUSE stack as domU
         and the same host I/O (blkbackd's store code, requests shaped as
         for the ring), but no ring: the ceiling of domU, and domU/dom0
         is what the ring costs.
  domU   xensim + blkbackd (cache/flush knobs in the vbd's xenstore nodes)
         + blkfront-test export: every block goes through blkbackd's ring.
  raw    the backing file itself (no FUSE, no ring): the host baseline, and
         what blkbench's own tests use where the stack is not needed.

Real-Xen rows (xen-nested, xen-host) plug in here as more classes with the
same two methods; register them in WHERES.

wce (write cache of the backing): 0 = write-through (every write durable
on completion, like hdparm -W0), 1 = write-back (durable on flush).
dom0 rows: the loop's write_cache follows wce ("write through" for wce0:
the kernel sees no volatile cache and sends no flush, as after hdparm -W0).
barrier (domU): what the backend is told (its flush-mode key): 1 = "auto"
(blkbackd advertises feature-flush-cache per its backing's cache, as
Linux blkback does: nothing on a writethrough backing), 0 = "none".  The
loop's write_cache then follows what was negotiated, as Linux blkfront
sets it (blk_queue_write_cache(rq, feature_flush, ...): "write back" iff
feature-flush-cache or feature-barrier is 1), so the guest flushes only
when its backend lets it.
"""

import collections
import os
import re

from .system import BenchError, Daemon, run, wait_until, warn, is_mountpoint


def _help_text(path):
    p = run([path, "--help"], check=False, timeout=10)
    return p.stdout + p.stderr, p.returncode


def _require_help(path, words, what):
    """Probe a program: --help must succeed and mention each of words."""
    text, rc = _help_text(path)
    if rc != 0:
        raise BenchError("%s: '%s --help' exits %d (%s)" % (
            what, path, rc, (text.strip().splitlines() or ["no output"])[-1]))
    for w in words:
        if w not in text:
            raise BenchError("%s: %s does not offer %s yet" % (what, path, w))


WRITE_BACK, WRITE_THROUGH = "write back", "write through"

# What a Where hands back for one run: the disk image file to attach; the
# guest disk's queue/write_cache (WRITE_BACK or WRITE_THROUGH) and why, as
# one line for the logs; extra keys for the run's row (results.json).
GuestDisk = collections.namedtuple("GuestDisk", "path write_cache why row")


def _wce_disk(path, cell):
    """A disk whose kernel sees the backing's cache as it is (dom0, raw)."""
    wc = WRITE_BACK if cell.wce else WRITE_THROUGH
    return GuestDisk(path, wc, "wce=%d: the backing's write cache is %s"
                     % (cell.wce, "on" if cell.wce else "off (hdparm -W0)"), {})


class Where:
    """A way to put the guest's disk somewhere.  Subclasses set name."""

    name = None
    # program names this where needs, looked up by the caller's Tools
    programs = ()

    def __init__(self, tools):
        self.tools = tools

    def probe(self):
        """Raise BenchError saying why this where cannot run here."""

    def start(self, cell, rundir, backing, cleanup, log, logdir):
        """Start the stack for one run; register its teardown on cleanup.

        rundir: private scratch (sockets, mountpoints; removed after the
        run); logdir: where daemon logs go (kept with the results).
        Returns a GuestDisk: the disk image file to attach to a loop
        device, and the write_cache the guest's kernel would give it.
        """
        raise NotImplementedError


class RawWhere(Where):
    name = "raw"

    def probe(self):
        pass

    def start(self, cell, rundir, backing, cleanup, log, logdir):
        if cell.wce == 0:
            raise BenchError("where=raw cannot model wce=0 (the host file has no "
                             "write-through mode through a loop device); use dom0/domU")
        return _wce_disk(backing, cell)


def _wait_export(mnt, pidfile, daemon, timeout=60):
    """Wait for blkfront-test export to serve MNT/disk (its pidfile is
    written once the FUSE file system is mounted and serving)."""
    disk = os.path.join(mnt, "disk")
    wait_until("the FUSE export %s" % disk,
               lambda: os.path.exists(pidfile) and is_mountpoint(mnt) and os.path.exists(disk),
               timeout, daemons=[daemon])
    return disk


def _stop_export(daemon, mnt):
    """Stop a blkfront-test export (SIGTERM unmounts and closes the device
    cleanly); make sure its FUSE mount is gone."""
    daemon.stop()
    if is_mountpoint(mnt):
        warn("blkfront-test left %s mounted: fusermount3 -u" % mnt)
        run(["fusermount3", "-u", mnt], check=False)
        if is_mountpoint(mnt):
            run(["umount", "-l", mnt])


def _probe_export(tools, what):
    bft = tools.path("blkfront-test")
    text, rc = _help_text(bft)
    if rc != 0 or "export" not in text:
        raise BenchError("%s: %s has no export command" % (what, bft))
    p = run([bft, "export", "--help"], check=False, timeout=10)
    text = p.stdout + p.stderr
    if p.returncode != 0 or "not implemented" in text or "--direct" not in text:
        raise BenchError("%s: 'blkfront-test export' is not functional yet (%s)"
                         % (what, (text.strip().splitlines() or ["no output"])[-1]))


class Dom0Where(Where):
    """blkfront-test export --direct: FUSE over the backing, no ring."""

    name = "dom0"
    programs = ("blkfront-test", "fusermount3")

    def probe(self):
        _probe_export(self.tools, "where=dom0")

    def start(self, cell, rundir, backing, cleanup, log, logdir):
        mnt = os.path.join(rundir, "export")
        pidfile = os.path.join(rundir, "export.pid")
        os.makedirs(mnt, exist_ok=True)
        d = Daemon("blkfront-test export --direct",
                   [self.tools.path("blkfront-test"), "export", "--direct", backing,
                    "--cache", "writeback" if cell.wce else "writethrough",
                    "--pidfile", pidfile, "--stats", os.path.join(logdir, "export.stats"),
                    mnt],
                   os.path.join(logdir, "blkfront-test.log"))
        cleanup.push("stop blkfront-test export %s" % mnt, _stop_export, d, mnt)
        return _wce_disk(_wait_export(mnt, pidfile, d), cell)


class DomUWhere(Where):
    """xensim + blkbackd + blkfront-test export, over the ring.

    The vbd is created as xl would (blkfront-test xl-add), with the
    backend knobs in its xenstore directory: cache = writethrough|writeback
    (wce) and flush-mode = auto|none (barrier).  Once the guest is
    connected, the flush features blkbackd published decide the guest
    disk's write_cache, as in Linux blkfront.
    """

    name = "domU"
    programs = ("xensim", "xensim-ctl", "blkbackd", "blkfront-test", "fusermount3",
                "xenstore-read")

    def probe(self):
        _require_help(self.tools.path("xensim"), ["--dir", "--pidfile"], "where=domU")
        _require_help(self.tools.path("blkbackd"), ["--sim-dir", "--pidfile"], "where=domU")
        _probe_export(self.tools, "where=domU")

    def start(self, cell, rundir, backing, cleanup, log, logdir):
        simdir = os.path.join(rundir, "xensim")
        os.makedirs(simdir, exist_ok=True)
        env = dict(os.environ, XENSIM_DIR=simdir,
                   XENSTORED_PATH=os.path.join(simdir, "xenstore.sock"))

        pidfile = os.path.join(rundir, "xensim.pid")
        sim = Daemon("xensim", [self.tools.path("xensim"), "--dir", simdir,
                                "--pidfile", pidfile],
                     os.path.join(logdir, "xensim.log"), env=env)
        cleanup.push("stop xensim", sim.stop)
        wait_until("xensim's pidfile %s" % pidfile, lambda: os.path.exists(pidfile),
                   30, daemons=[sim])

        p = run([self.tools.path("xensim-ctl"), "--dir", simdir, "create-domain", "guest"],
                log=log, env=env)
        domid = p.stdout.strip()
        if not re.fullmatch(r"[0-9]+", domid):
            raise BenchError("xensim-ctl create-domain printed %r, not a domid" % domid)

        bpid = os.path.join(rundir, "blkbackd.pid")
        back = Daemon("blkbackd", [self.tools.path("blkbackd"), "-f", "--transport=sim",
                                   "--sim-dir", simdir, "--pidfile", bpid],
                      os.path.join(logdir, "blkbackd.log"), env=env)
        cleanup.push("stop blkbackd", back.stop)
        wait_until("blkbackd's pidfile %s" % bpid, lambda: os.path.exists(bpid),
                   30, daemons=[back])

        bft = self.tools.path("blkfront-test")
        flush_mode = "auto" if cell.barrier else "none"
        p = run([bft, "xl-add", "--domid", domid, "--params", backing,
                 "--be-key", "cache=%s" % ("writeback" if cell.wce else "writethrough"),
                 "--be-key", "flush-mode=%s" % flush_mode],
                log=log, env=env)
        paths = p.stdout.split()   # "FRONTEND BACKEND"
        if len(paths) != 2 or not paths[1].startswith("/local/domain/"):
            raise BenchError("blkfront-test xl-add printed %r, not the frontend and "
                             "backend paths" % p.stdout.strip())
        be = paths[1]
        cleanup.push("remove the vbd", run, [bft, "xl-remove", "--domid", domid],
                     log, False, 30, env=env)

        mnt = os.path.join(rundir, "export")
        epid = os.path.join(rundir, "export.pid")
        os.makedirs(mnt, exist_ok=True)
        front = Daemon("blkfront-test export",
                       [bft, "export", "--sim-dir", simdir, "--domid", domid,
                        "--pidfile", epid, "--stats", os.path.join(logdir, "export.stats"),
                        mnt],
                       os.path.join(logdir, "blkfront-test.log"), env=env)
        cleanup.push("stop blkfront-test export %s" % mnt, _stop_export, front, mnt)
        disk = _wait_export(mnt, epid, front)
        # the export serves only once the guest is connected: the
        # features are published (blkbackd writes them with Connected)
        feat = {}
        for key in ("feature-flush-cache", "feature-barrier"):
            p = run([self.tools.path("xenstore-read"), "%s/%s" % (be, key)],
                    log=log, env=env, check=False)
            v = p.stdout.strip() if p.returncode == 0 else "0"   # absent: not offered
            if v not in ("0", "1"):
                raise BenchError("%s/%s is %r, neither 0 nor 1" % (be, key, v))
            feat[key] = int(v)
        may_flush = feat["feature-flush-cache"] or feat["feature-barrier"]
        return GuestDisk(disk, WRITE_BACK if may_flush else WRITE_THROUGH,
                         "flush-mode=%s: blkbackd advertised feature-flush-cache=%d "
                         "feature-barrier=%d" % (flush_mode, feat["feature-flush-cache"],
                                                 feat["feature-barrier"]),
                         {"flush_mode": flush_mode,
                          "feature_flush_cache": feat["feature-flush-cache"],
                          "feature_barrier": feat["feature-barrier"]})


WHERES = {w.name: w for w in (Dom0Where, DomUWhere, RawWhere)}
