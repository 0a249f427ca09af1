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
barrier (domU): what the backend advertises: 1 = flush-cache and barrier
("both"), 0 = nothing ("none"), so the guest cannot flush and does not try.
"""

import os
import re

from .system import BenchError, Daemon, info, run, wait_until, warn, is_mountpoint


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

    def start(self, cell, rundir, backing, cleanup, log):
        """Start the stack for one run; register its teardown on cleanup.

        Returns the path of the disk image file to attach to a loop device.
        """
        raise NotImplementedError


class RawWhere(Where):
    name = "raw"

    def probe(self):
        pass

    def start(self, cell, rundir, backing, cleanup, log):
        if cell.wce == 0:
            raise BenchError("where=raw cannot model wce=0 (the host file has no "
                             "write-through mode through a loop device); use dom0/domU")
        return backing


def _wait_fuse_export(mnt, daemon, timeout=30):
    disk = os.path.join(mnt, "disk")
    wait_until("the FUSE export %s" % disk,
               lambda: is_mountpoint(mnt) and os.path.exists(disk),
               timeout, daemons=[daemon])
    return disk


def _stop_export(daemon, mnt):
    """Stop a blkfront-test export; make sure its FUSE mount is gone."""
    daemon.stop()
    if is_mountpoint(mnt):
        warn("blkfront-test left %s mounted: fusermount3 -u" % mnt)
        run(["fusermount3", "-u", mnt], check=False)
        if is_mountpoint(mnt):
            run(["umount", "-l", mnt])


class Dom0Where(Where):
    """blkfront-test export --direct: FUSE over the backing, no ring."""

    name = "dom0"
    programs = ("blkfront-test",)

    def probe(self):
        _require_help(self.tools.path("blkfront-test"), ["export", "--direct", "--cache"],
                      "where=dom0")

    def start(self, cell, rundir, backing, cleanup, log):
        mnt = os.path.join(rundir, "export")
        os.makedirs(mnt, exist_ok=True)
        d = Daemon("blkfront-test export --direct",
                   [self.tools.path("blkfront-test"), "export", "--direct", backing,
                    "--cache", "writeback" if cell.wce else "writethrough", mnt],
                   os.path.join(rundir, "blkfront-test.log"))
        cleanup.push("stop blkfront-test export %s" % mnt, _stop_export, d, mnt)
        return _wait_fuse_export(mnt, d)


class DomUWhere(Where):
    """xensim + blkbackd + blkfront-test export, over the ring."""

    name = "domU"
    programs = ("xensim", "xensim-ctl", "blkbackd", "blkfront-test")

    def probe(self):
        _require_help(self.tools.path("xensim"), ["--dir", "--pidfile"], "where=domU")
        _require_help(self.tools.path("blkbackd"), ["--pidfile"], "where=domU")
        _require_help(self.tools.path("blkfront-test"), ["export", "create-vbd"],
                      "where=domU")

    def start(self, cell, rundir, backing, cleanup, log):
        simdir = os.path.join(rundir, "xensim")
        os.makedirs(simdir, exist_ok=True)
        env = dict(os.environ, XENSIM_DIR=simdir,
                   XENSTORED_PATH=os.path.join(simdir, "xenstore.sock"))

        pidfile = os.path.join(simdir, "xensim.pid")
        sim = Daemon("xensim", [self.tools.path("xensim"), "--dir", simdir,
                                "--pidfile", pidfile],
                     os.path.join(rundir, "xensim.log"), env=env)
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
                                   "--pidfile", bpid],
                      os.path.join(rundir, "blkbackd.log"), env=env)
        cleanup.push("stop blkbackd", back.stop)
        wait_until("blkbackd's pidfile %s" % bpid, lambda: os.path.exists(bpid),
                   30, daemons=[back])

        # The vbd's xenstore nodes, as xl would write them; the knobs:
        # cache = writethrough|writeback (wce), flush = both|none (barrier).
        run([self.tools.path("blkfront-test"), "create-vbd", "--domid", domid,
             "--target", backing,
             "--cache", "writeback" if cell.wce else "writethrough",
             "--flush", "both" if cell.barrier else "none"], log=log, env=env)

        mnt = os.path.join(rundir, "export")
        os.makedirs(mnt, exist_ok=True)
        front = Daemon("blkfront-test export", [self.tools.path("blkfront-test"), "export",
                                                "--domid", domid, mnt],
                       os.path.join(rundir, "blkfront-test.log"), env=env)
        cleanup.push("stop blkfront-test export %s" % mnt, _stop_export, front, mnt)
        info("domU: domid %s, blkbackd pid %d, export %s" % (domid, back.proc.pid, mnt))
        return _wait_fuse_export(mnt, front)


WHERES = {w.name: w for w in (Dom0Where, DomUWhere, RawWhere)}
