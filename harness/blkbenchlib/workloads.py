# SPDX-License-Identifier: GPL-2.0-or-later
"""Workloads: what runs inside the guest filesystem, in the memory cgroup.

Each workload: name, the programs it needs, the metrics it reports (the
first two are the summary table's columns), and run(ctx) -> (metrics dict,
text for stdout).  Raw tool output goes to ctx.rundir.
"""

import io
import os
import random
import signal
import subprocess
import tarfile
import time

from . import parsers
from .system import BenchError, cmdline, info


class RunContext:
    """What a workload may use: the mounted filesystem, the cgroup, knobs."""

    def __init__(self, cell, opts, tools, mnt, cgroup, rundir, log, workdir):
        self.cell, self.opts, self.tools = cell, opts, tools
        self.mnt, self.cgroup, self.rundir = mnt, cgroup, rundir
        self.log, self.workdir = log, workdir
        self.deadline = time.monotonic() + opts.timeout

    def failed(self, what, rc, tail, path):
        """The BenchError for a workload program that exited rc != 0: a
        kill by the memory cgroup's OOM killer is named as such (it is a
        --mem too small for the workload, not a tool failure)."""
        if rc in (-signal.SIGKILL, 128 + signal.SIGKILL) and (self.cgroup.oom_kills() or 0) > 0:
            return BenchError("%s was killed by the memory cgroup's OOM killer (limit %d MiB); "
                              "raise --mem (see %s)" % (what, self.opts.mem, path))
        return BenchError("%s failed (exit %d): %s (see %s)" % (what, rc, tail, path))

    def raw(self, name):
        return os.path.join(self.rundir, name)

    def spawn(self, argv, stdout, stderr=subprocess.STDOUT, cwd=None):
        """Start argv inside the cgroup, in its own session."""
        self.log.write("$ %s\n" % cmdline(argv))
        self.log.flush()
        return subprocess.Popen(self.cgroup.wrap(argv), stdout=stdout, stderr=stderr,
                                stdin=subprocess.DEVNULL, cwd=cwd or self.mnt,
                                start_new_session=True)

    def wait(self, p, what):
        """Wait for a spawned process, at most until the run's deadline
        (--timeout): a stuck stack must not hang blkbench.  Returns
        (exit code, rusage).  On timeout raise; the cleanup stack then
        kills the cgroup and tears the stack down."""
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                return p.returncode, ru
            if time.monotonic() > self.deadline:
                raise BenchError("%s did not finish within --timeout %d s (is the stack "
                                 "stuck? see %s)" % (what, self.opts.timeout, self.rundir))
            time.sleep(0.1)

    def timed(self, argv, what, out_path):
        """Run argv in the cgroup to completion; (user s, system s, real s).

        Uses wait4() so the CPU times are the command's own (and its
        children's), as the shell's `time` reports them.
        """
        with open(out_path, "a") as out:
            t0 = time.monotonic()
            p = self.spawn(argv, out)
            rc, ru = self.wait(p, what)
            real = time.monotonic() - t0
        if rc != 0:
            with open(out_path) as f:
                tail = " / ".join(f.read().strip().splitlines()[-4:])
            raise self.failed(what, rc, tail, out_path)
        return ru.ru_utime, ru.ru_stime, real

    def run_to_file(self, argv, what, out_path):
        """Run argv in the cgroup, stdout to out_path; stderr's last lines
        go into the error if it fails."""
        err_path = out_path + ".err"
        with open(out_path, "w") as out, open(err_path, "w") as err:
            p = self.spawn(argv, out, err)
            rc, _ = self.wait(p, what)
        if rc != 0:
            with open(err_path) as f:
                tail = " / ".join(f.read().strip().splitlines()[-2:])
            raise self.failed(what, rc, tail, err_path)


class Workload:
    name = None
    programs = ()
    metrics = ()
    # printf formats per metric for the summary table (default "%d")
    formats = {}

    def dash_means(self, metrics):
        """Why a cell of these metrics shows "-" in the table."""
        return ("%s: the workload reported no value (see its output under raw/)"
                % ", ".join(metrics))

    def run(self, ctx):
        raise NotImplementedError


class Bonnie(Workload):
    """Real bonnie++: -s >= 2x the cgroup memory, -r = that memory, -n files."""

    name = "bonnie"
    programs = ("bonnie++",)
    metrics = ("blkout", "create", "rewrite", "blkin", "seeks",
               "seq_read", "seq_delete", "ran_create", "ran_delete")

    def run(self, ctx):
        o = ctx.opts
        size = o.size or 2 * o.mem
        if size < 2 * o.mem:
            raise BenchError("--size %d MiB: bonnie++ needs at least twice --mem (%d MiB)"
                             % (size, 2 * o.mem))
        d = os.path.join(ctx.mnt, "bonnie")
        os.mkdir(d)
        nfiles = str(o.files)
        dirs = getattr(o, "bonnie_dirs", 1)
        if getattr(o, "file_size", None) or dirs > 1:
            nfiles += ":%d:%d" % (o.file_size or (0, 0))
        if dirs > 1:
            nfiles += ":%d" % dirs
        sarg = "%d:%d" % (size, o.chunk)
        if getattr(o, "bonnie_seeks", None) is not None:
            # bonnie++ 2.00a: -s SIZE:CHUNK:SEEKS, 0 skips the seek phase
            sarg += ":%d" % o.bonnie_seeks
        argv = [ctx.tools.path("bonnie++"), "-d", d, "-s", sarg,
                "-r", str(o.mem),
                "-n", nfiles, "-u", "root", "-q", "-m", ctx.cell.name[:15]]
        if not o.bonnie_perchar:
            argv.append("-f")
        if o.bonnie_fsync:
            argv.append("-b")
        if getattr(o, "bonnie_seed", None) is not None:
            argv += ["-z", str(o.bonnie_seed)]
        csv_path = ctx.raw("bonnie.csv")
        ctx.run_to_file(argv, "bonnie++", csv_path)
        with open(csv_path) as f:
            rec = parsers.parse_bonnie_csv(f.read())[-1]
        return parsers.bonnie_metrics(rec), parsers.render_bonnie_table(rec), rec["raw"]

    def dash_means(self, metrics):
        hints = {"blkout": "raise --size", "create": "raise --files or give --file-size",
                 "rewrite": "raise --size", "blkin": "raise --size"}
        how = "; ".join("%s: %s" % (m, hints[m]) for m in metrics if m in hints)
        return ("bonnie++ printed +++++: the phase took under 0.5 s, too short for it "
                "to time (the disk is faster than the size can show)%s"
                % (" -- %s" % how if how else ""))


class FsMark(Workload):
    """fs_mark-compatible: fsmark -S 1 -s 65536 -w 4096 -t T -n N -L L."""

    name = "fsmark"
    programs = ("fsmark",)
    metrics = ("files_per_sec", "app_overhead_us")
    formats = {"files_per_sec": "%.1f"}

    def run(self, ctx):
        o = ctx.opts
        argv = [ctx.tools.path("fsmark"), "-d", os.path.join(ctx.mnt, "fsmark"),
                "-S", str(o.fsmark_sync), "-s", str(o.fsmark_size), "-w", "4096",
                "-t", str(o.threads), "-n", str(o.fsmark_files), "-L", str(o.loops)]
        out_path = ctx.raw("fsmark.out")
        ctx.run_to_file(argv, "fsmark", out_path)
        with open(out_path) as f:
            text = f.read()
        rows = parsers.parse_fsmark(text)
        fps = [r["files_per_sec"] for r in rows]
        table = text[text.index("FSUse%"):]  # fs_mark's own table, as printed
        return ({"files_per_sec": sum(fps) / len(fps),
                 "app_overhead_us": sum(r["app_overhead_us"] for r in rows) / len(rows)},
                table, None)


class Fsync(Workload):
    """fsync-tester beside a "bigfile torture" loop (dd + sync + rm)."""

    name = "fsync"
    programs = ("fsync-tester", "dd")
    metrics = ("fsync_avg", "fsync_max", "fsync_p50")
    formats = {m: "%.4f" for m in metrics}

    def run(self, ctx):
        o = ctx.opts
        size = o.size or 2 * o.mem
        count = max(1, size // 8)
        torture = ["/bin/sh", "-c",
                   "while : ; do dd if=/dev/zero of=bigfile bs=8M count=%d 2>/dev/null; "
                   "sync; rm -f bigfile; done" % count]
        with open(ctx.raw("torture.log"), "w") as tlog:
            bg = ctx.spawn(torture, tlog)
        try:
            time.sleep(1)  # let the writer get going first
            argv = [ctx.tools.path("fsync-tester"), "-n", str(o.fsync_count),
                    "-f", os.path.join(ctx.mnt, "fsync-tester.tmp")]
            out_path = ctx.raw("fsync.out")
            ctx.run_to_file(argv, "fsync-tester", out_path)
        finally:
            try:
                os.killpg(bg.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            bg.wait()
        with open(out_path) as f:
            text = f.read()
        times = parsers.parse_fsync(text)
        return parsers.fsync_summary(times), text, None


# --------------------------------------------------------------------------
# tar / rm on a generated kernel-sized tree

TREE_FILES = 28000     # a 2.6.27 kernel tree: ~28 000 files
TREE_DIRS = 2000       # in ~2 000 directories
TREE_BYTES = 300 << 20  # ~300 MB


def generate_tree_tar(path, scale):
    """Write a deterministic tar of a source-like tree, scaled by `scale`.

    Same scale, same bytes: file sizes follow a long-tailed distribution
    with a mean of TREE_BYTES / TREE_FILES, names and contents come from a
    fixed seed.  Returns (files, dirs, bytes).
    """
    rng = random.Random(2627)
    nfiles = max(1, int(TREE_FILES * scale))
    ndirs = max(1, int(TREE_DIRS * scale))
    mean = TREE_BYTES / TREE_FILES
    block = bytes(rng.getrandbits(8) for _ in range(1 << 16)) * 4  # 256 KiB
    dirs = ["linux-tree"]
    for i in range(1, ndirs):
        parent = dirs[rng.randrange(len(dirs))] if len(dirs) > 1 else dirs[0]
        if parent.count("/") >= 5:
            parent = dirs[0]
        dirs.append("%s/d%04d" % (parent, i))
    total = 0
    mtime = 1224633600  # 2008-10-22, the 2.6.27 days
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for d in dirs:
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(ti)
        for i in range(nfiles):
            size = min(int(rng.expovariate(1 / mean)), len(block) - 1)
            off = rng.randrange(len(block) - size) if size < len(block) else 0
            ti = tarfile.TarInfo("%s/f%05d.c" % (dirs[i % ndirs], i))
            ti.size, ti.mode, ti.mtime = size, 0o644, mtime
            tar.addfile(ti, io.BytesIO(block[off:off + size]))
            total += size
    return nfiles, ndirs, total


class TarRm(Workload):
    """tar -xf TREE.tar; sync; rm -rf TREE; sync; each timed as `time` does."""

    name = "tar"
    programs = ("tar", "sync", "rm")
    metrics = ("tar_s", "rm_s", "tar_sync_s", "rm_sync_s")
    formats = {m: "%.3f" for m in metrics}

    def tarball(self, ctx):
        path = os.path.join(ctx.workdir, "linux-tree-%g.tar" % ctx.opts.scale)
        if not os.path.exists(path):
            t0 = time.monotonic()
            files, dirs, nbytes = generate_tree_tar(path + ".tmp", ctx.opts.scale)
            os.rename(path + ".tmp", path)
            info("generated %s: %d files in %d directories, %d MB, in %.1f s"
                 % (path, files, dirs, nbytes >> 20, time.monotonic() - t0))
        return path

    def run(self, ctx):
        tarball = self.tarball(ctx)
        out_path = ctx.raw("tar.out")
        steps = [("tar_s", ["tar", "-xf", tarball], "tar -xf %s" % os.path.basename(tarball)),
                 ("tar_sync_s", ["sync"], "sync"),
                 ("rm_s", ["rm", "-rf", "linux-tree"], "rm -rf linux-tree"),
                 ("rm_sync_s", ["sync"], "sync")]
        metrics, lines = {}, []
        for key, argv, label in steps:
            user, system, real = ctx.timed(argv, label, out_path)
            metrics[key] = real
            lines.append(parsers.format_time_line(label, user, system, real))
        with open(out_path, "a") as f:
            f.write("\n".join(lines) + "\n")
        return metrics, "\n".join(lines) + "\n", None


class DdSync(Workload):
    """dd --size MiB of zeroes, sync, then read it back with O_DIRECT,
    timed: a smoke test of the stack (what "blkbench probe --io" runs) and
    quick streaming numbers."""

    name = "dd"
    programs = ("dd", "sync")
    metrics = ("write_mbps", "read_mbps")
    formats = {"write_mbps": "%.1f", "read_mbps": "%.1f"}

    def run(self, ctx):
        size = ctx.opts.size or 2 * ctx.opts.mem
        out_path = ctx.raw("dd.out")
        t0 = time.monotonic()
        user, system, _ = ctx.timed(["dd", "if=/dev/zero", "of=ddfile", "bs=1M",
                                     "count=%d" % size], "dd", out_path)
        u2, s2, _ = ctx.timed(["sync"], "sync", out_path)
        real = time.monotonic() - t0
        line = parsers.format_time_line("dd bs=1M count=%d; sync" % size,
                                        user + u2, system + s2, real)
        u3, s3, rreal = ctx.timed(["dd", "if=ddfile", "of=/dev/null", "bs=1M",
                                   "iflag=direct"], "dd (read back)", out_path)
        line += "\n" + parsers.format_time_line("dd iflag=direct bs=1M", u3, s3, rreal)
        return {"write_mbps": size / real, "read_mbps": size / rreal}, line + "\n", None


WORKLOADS = {w.name: w for w in (Bonnie, FsMark, Fsync, TarRm, DdSync)}
