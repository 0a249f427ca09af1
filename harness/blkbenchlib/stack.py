"""The "where" step: what stands between the guest filesystem and the backing.

Each Where turns a fresh backing file into a disk image file that blkbench
then attaches with `losetup --direct-io=on`, formats and mounts:

  dom0   blkfront-test export --direct BACKING: the same FUSE stack as domU,
         with the same cache model, but no ring: the ratio domU/dom0
         isolates the paravirtual path.
  domU   xensim + blkbackd (cache/flush knobs in the vbd's xenstore nodes)
         + blkfront-test export: every block goes through blkbackd's ring.
  raw    the backing file itself (no FUSE, no ring): the host baseline, and
         what blkbench's own tests use where the stack is not needed.

Real-Xen rows (xen-nested, xen-host) plug in here as more classes with the
same two methods; register them in WHERES.

wce (write cache of the backing): 0 = write-through (every write durable
on completion, like hdparm -W0), 1 = write-back (durable on flush).
barrier (domU): what the backend advertises (its flush-mode key): 1 =
flush-cache and barrier ("both"), 0 = nothing ("none"), so the guest
cannot flush and does not try.
"""

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
        Returns the path of the disk image file to attach to a loop device.
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
        return backing


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
        return _wait_export(mnt, pidfile, d)


class DomUWhere(Where):
    """xensim + blkbackd + blkfront-test export, over the ring.

    The vbd is created as xl would (blkfront-test xl-add), with the
    backend knobs in its xenstore directory: cache = writethrough|writeback
    (wce) and flush-mode = both|none (barrier: what blkbackd advertises).
    """

    name = "domU"
    programs = ("xensim", "xensim-ctl", "blkbackd", "blkfront-test", "fusermount3")

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
        run([bft, "xl-add", "--domid", domid, "--params", backing,
             "--be-key", "cache=%s" % ("writeback" if cell.wce else "writethrough"),
             "--be-key", "flush-mode=%s" % ("both" if cell.barrier else "none")],
            log=log, env=env)
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
        return _wait_export(mnt, epid, front)


WHERES = {w.name: w for w in (Dom0Where, DomUWhere, RawWhere)}
