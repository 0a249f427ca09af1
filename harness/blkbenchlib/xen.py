# SPDX-License-Identifier: GPL-2.0-or-later
"""Real-Xen platforms of blkbench's where step: xen-nested and xen-host.

--platform sim (default) uses the Where classes of stack.py.  The Xen
platforms run the same cells differently, each cell-run as one "job": a
shell script that makes the cell's filesystem on $XT_DISK, mounts it with
the cell's options, runs the workload with the exact argv sim mode uses
(the Workload classes are asked for it) inside a memory cgroup of --mem,
and leaves the tool's own output in $XT_OUT; blkbench then hands that
output back to the same Workload class, so parsing, tables, CSV, JSON and
plots are those of sim mode.

  xen-nested  Xen 4.17 + a Debian PV dom0 booted in QEMU/TCG by
              tests/xen/run-in-domu.sh -J, ONE boot for the whole matrix.
              dom0 rows run in the nested dom0 on a loop device over a
              sparse file on its tmpfs; domU rows each in a new PV guest
              (xl create) whose xvda is a sparse file on the same tmpfs,
              served by blkbackd --transport=xen with the cell's cache and
              flush-mode keys (script=block-blkbackd).
  xen-host    this machine is a Xen dom0 with blkbackd running as its vbd
              backend: dom0 rows run here on a loop device over --backing
              (an LV or a file), domU rows in a PV guest created with
              xl create, whose xvda is --backing, served by blkbackd.  The
              guest's output comes back on a second small disk (xvdb) as a
              tar archive, which is also how xen-nested's guests return it.

wce for dom0 rows is the loop device's queue/write_cache ("write through":
the kernel sends no flushes, as to a disk after hdparm -W0; "write back");
for domU rows, blkbackd's cache key (writethrough: O_DSYNC writes;
writeback).  barrier: the mount option, and for domU blkbackd's
flush-mode (auto / none), as in sim mode: with auto blkbackd advertises
feature-flush-cache per its backing's cache (nothing on writethrough, as
Linux blkback), and the guest's own blkfront sets its queue's write cache
from that.
"""

import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time

from .system import BenchError, Cleanup, MemCgroup, info, kernel_release, run, warn

PLATFORMS = ("sim", "xen-nested", "xen-host")
# workloads whose tool runs as one command with its output in one file
XEN_WORKLOADS = ("bonnie", "fsmark")
# guest programs, by the host tool name the Workload classes ask for
GUEST_TOOL = {"bonnie++": "bonnie++", "fsmark": "fsmark"}
MKFS = {"mkfs.ext3": ["mke2fs", "-t", "ext3"], "mkfs.ext4": ["mke2fs", "-t", "ext4"],
        "mkfs.xfs": ["mkfs.xfs"]}


class _Captured(Exception):
    """Raised by _JobContext.run_to_file in capture mode: the argv."""

    def __init__(self, argv, out_name):
        super().__init__(argv)
        self.argv, self.out_name = argv, out_name


class _JobContext:
    """What a Workload's run() sees (RunContext's interface, the parts
    Bonnie and FsMark use).  Capture mode (outputs None): run_to_file
    raises _Captured with the argv the workload would run.  Replay mode:
    run_to_file copies the job's output file to where the workload reads
    it, so the workload parses it as it does in sim mode."""

    def __init__(self, cell, opts, tools, mnt, rundir, outputs=None):
        self.cell, self.opts, self.tools = cell, opts, tools
        self.mnt, self.rundir, self.outputs = mnt, rundir, outputs
        self.deadline = time.monotonic() + opts.timeout

    def raw(self, name):
        return os.path.join(self.rundir, name)

    def run_to_file(self, argv, what, out_path):
        name = os.path.basename(out_path)
        if self.outputs is None:
            raise _Captured([str(a) for a in argv], name)
        src = os.path.join(self.outputs, name)
        if not os.path.exists(src):
            raise BenchError("%s: the job left no %s (see %s)" % (what, name, self.rundir))
        if os.path.abspath(src) != os.path.abspath(out_path):
            shutil.copyfile(src, out_path)


def _q(arg, mnt):
    """Quote one argument for the job script; the host's stand-in mount
    point becomes "$M" (the job's own)."""
    if arg == mnt or arg.startswith(mnt + "/"):
        return '"$M"' + shlex.quote(arg[len(mnt):]) if arg != mnt else '"$M"'
    return shlex.quote(arg)


def job_script(bench, cell, r, scratch):
    """The job script of one run of cell, and the name of its output file.

    scratch: a host directory standing in for the mount point while the
    workload is asked for its argv (Bonnie makes its directory there)."""
    o = bench.o
    w = bench.workloads[cell.workload]
    mnt = tempfile.mkdtemp(prefix="mnt.", dir=scratch)
    try:
        w.run(_JobContext(cell, o, bench.tools, mnt, scratch))
    except _Captured as c:
        argv, out_name = c.argv, c.out_name
    else:
        raise BenchError("workload %s ran nothing to capture" % cell.workload)
    mkdirs = []
    for root, dirs, _ in os.walk(mnt):
        mkdirs += [os.path.join(root, d) for d in dirs]
    shutil.rmtree(mnt)
    prog = os.path.basename(argv[0])
    if prog not in GUEST_TOOL:
        raise BenchError("--platform %s: no guest program for %s" % (o.platform, prog))
    inodes = o.files * 1024 + 16384 if cell.workload == "bonnie" else 0
    mk = cell.fs.mkfs_argv("DEV", inodes, o.journal)
    mkfs = ['"$G"/' + MKFS[mk[0]][0]] + [shlex.quote(a) for a in MKFS[mk[0]][1:] + mk[1:-1]] + ['"$D"']
    mopts = cell.fs.mount_options(cell.barrier, o.mount_opts, cell.atime)
    tool = ['"$G"/' + GUEST_TOOL[prog]] + [_q(a, mnt) for a in argv[1:]]
    lines = [
        "# blkbench job: %s run %d (--platform %s), %s" % (cell.name, r, o.platform, cell.workload),
        "# environment: XT_GNU (the tools), XT_DISK, XT_MNT, XT_OUT; XT_CGROUP=none:",
        "# the caller has put this script in the memory cgroup already",
        "set -u",
        'G=${XT_GNU:?} D=${XT_DISK:?} M=${XT_MNT:?} O=${XT_OUT:?}',
        'echo "blkbench job %s run %d on $D: $(uname -r)"' % (cell.name, r),
        "%s || { echo 'blkbench job: mkfs failed'; exit 3; }" % " ".join(mkfs),
        'mkdir -p "$M"',
        "mount -t %s%s \"$D\" \"$M\" || { echo %s; exit 4; }" % (
            cell.fs.fstype, (" -o " + shlex.quote(mopts)) if mopts else "",
            shlex.quote("blkbench job: mount -t %s -o %s $D refused by the kernel"
                        % (cell.fs.fstype, mopts))),
    ]
    lines += ["mkdir -p %s" % _q(d, mnt) for d in mkdirs]
    lines += [
        'CG=',
        'if [ "${XT_CGROUP:-}" != none ]; then',
        "\tgrep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts ||",
        "\t\t{ mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control; }",
        '\tCG=/sys/fs/cgroup/blkbench-job',
        '\tmkdir -p "$CG" && echo %d > "$CG/memory.max" || exit 6' % (o.mem << 20),
        'fi',
        'echo "+ %s"' % " ".join(tool).replace('"', "'"),
        "t0=$(cut -d' ' -f1 /proc/uptime)",
        'if [ -n "$CG" ]; then',
        "\tsh -c 'echo $$ > \"$0/cgroup.procs\" && exec \"$@\"' \"$CG\" %s > \"$O\"/%s 2> \"$O\"/%s.err"
        % (" ".join(tool), out_name, out_name),
        'else',
        '\t%s > "$O"/%s 2> "$O"/%s.err' % (" ".join(tool), out_name, out_name),
        'fi',
        'rc=$?',
        "echo \"exit $rc after $(echo \"$(cut -d' ' -f1 /proc/uptime) $t0\" | awk '{ print $1 - $2 }') s\"",
        '[ -z "$CG" ] || { cat "$CG/memory.peak" > "$O/memory.peak" 2>/dev/null; rmdir "$CG"; }',
        '[ $rc = 0 ] || tail -n 5 "$O"/%s.err' % out_name,
        'umount "$M" || { echo "blkbench job: umount failed"; [ $rc != 0 ] || rc=5; }',
        'exit $rc',
    ]
    return "\n".join(lines) + "\n", out_name


def _row(bench, cell, r, platform):
    o = bench.o
    row = {"cell": cell.name, "run": r, "where": cell.where, "wce": cell.wce,
           "barrier": cell.barrier, "fs": str(cell.fs),
           "mount_opts": cell.fs.mount_options(cell.barrier, o.mount_opts, cell.atime),
           "atime": cell.atime,
           "sched": "", "workload": cell.workload, "mem_mib": o.mem,
           "size_mib": o.size or 2 * o.mem, "disk_mib": bench.disk_mib,
           "platform": platform}
    # what decided the guest disk's queue/write_cache: the loop device's
    # mode (dom0), or blkbackd's flush-mode (domU: the guest's blkfront
    # sets it from the features advertised)
    if cell.where == "dom0":
        row["loop_write_cache"] = "write back" if cell.wce else "write through"
    else:
        row["flush_mode"] = _flush_mode(cell)
    return row


def _flush_mode(cell):
    """blkbackd's flush-mode for a domU cell: barrier1 lets blkbackd
    advertise per its backing (auto), barrier0 advertises nothing."""
    return "auto" if cell.barrier else "none"


def _finish_job(bench, k, cell, r, jobdir, rundir, t_elapsed, platform):
    """A finished job's output -> the row (parsed by the Workload class),
    or BenchError naming the job's own complaint."""
    for name in os.listdir(jobdir) if os.path.isdir(jobdir) else ():
        dst = os.path.join(rundir, "job.log" if name == "stdout" else name)
        shutil.copyfile(os.path.join(jobdir, name), dst)
    try:
        with open(os.path.join(jobdir, "rc")) as f:
            rc = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        rc = None
    if rc != 0:
        tail = ""
        try:
            with open(os.path.join(jobdir, "stdout")) as f:
                tail = " / ".join(ln.strip() for ln in f.read().strip().splitlines()[-4:])
        except OSError:
            pass
        raise BenchError("%s run %d (%s) failed: %s%s (see %s)" % (
            cell.name, r, platform, "exit %d" % rc if rc is not None else "it never finished",
            (": " + tail) if tail else "", rundir))
    row = _row(bench, cell, r, platform)
    scratch = tempfile.mkdtemp(prefix="replay.", dir=rundir)
    try:
        ctx = _JobContext(cell, bench.o, bench.tools, scratch, rundir, outputs=jobdir)
        metrics, text, csvline = bench.workloads[cell.workload].run(ctx)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    try:
        with open(os.path.join(jobdir, "memory.peak")) as f:
            row["cgroup_peak_mib"] = int(f.read().split()[0]) >> 20
    except (OSError, ValueError, IndexError):
        pass
    row["cgroup"] = "v2"
    row["elapsed_s"] = round(t_elapsed, 3)
    row.update(metrics)
    try:
        with open(os.path.join(jobdir, "stdout")) as f:
            m = re.search(r"^blkbench job .* on \S+: (\S+)$", f.read(), re.M)
        if m:
            row["kernel"] = m.group(1)
    except OSError:
        pass
    return row, text, csvline


def _check_workloads(bench, platform):
    for c in bench.cells:
        if c.workload not in XEN_WORKLOADS:
            raise BenchError("--platform %s: workload %s is not supported there (supported: %s)"
                             % (platform, c.workload, ", ".join(XEN_WORKLOADS)))
        if c.where not in ("dom0", "domU"):
            raise BenchError("--platform %s: --where %s: only dom0 and domU rows exist there"
                             % (platform, c.where))
        if c.sched:
            raise BenchError("--platform %s: --sched is not supported there" % platform)


def _missing_message(platform, missing, hint):
    return "--platform %s cannot run here: %s%s" % (
        platform, "; ".join(missing), (" (%s)" % hint) if hint else "")


class XenNested:
    """Xen 4.17 nested in QEMU/TCG: one boot for the whole matrix."""

    name = "xen-nested"
    # what tests/xen/check-xen.sh needs too (tests/xen/install-deps)
    FILES = ("/boot/xen-4.17-amd64.gz", "/usr/lib/xen-4.17/bin/xl",
             "/usr/lib/xen-4.17/bin/xenstored", "/bin/busybox", "/sbin/mkfs.xfs",
             "/usr/sbin/bonnie++", "/sbin/mke2fs")

    def __init__(self, bench):
        self.bench = bench
        # None for an installed blkbench: preflight refuses (never a
        # relative tests/xen, which would run the current directory's scripts)
        src = bench.paths["srcdir"]
        self.xendir = os.path.join(src, "tests", "xen") if src else None

    def preflight(self):
        missing = nested_missing(self.xendir, "run-in-domu.sh", self.FILES)
        hotplug = os.path.join(self.bench.paths["srcdir"] or "", "backend", "block-blkbackd")
        if self.xendir and not os.path.isfile(hotplug):
            missing.append(hotplug)
        for prog in ("blkbackd",) + tuple(
                p for p in ("fsmark",) if any(c.workload == "fsmark" for c in self.bench.cells)):
            if not self.bench.tools.optional(prog):
                missing.append("%s (build the tree with make)" % prog)
        if missing:
            raise BenchError(_missing_message(self.name, missing,
                                              "as root: tests/xen/install-deps"))
        _check_workloads(self.bench, self.name)
        # dom0 has 1024 MiB (boot.sh) for its own ~300 MiB, the guest
        # (--mem + 192) and the backing's written blocks on its tmpfs
        o = self.bench.o
        size = o.size or 2 * o.mem
        if o.mem + 192 + size * 5 // 4 + 300 > 1024:
            raise BenchError("--platform xen-nested: --mem %d MiB and --size %d MiB do not fit "
                             "in the nested dom0's 1024 MiB (the guest gets --mem + 192 MiB, "
                             "the backing lives on dom0's tmpfs): keep --mem + 1.25 x --size "
                             "under 530, e.g. --mem 64 --size 128" % (o.mem, size))

    def tool_versions(self):
        p = run(["dpkg-query", "-W", "-f", "${Version}", "xen-hypervisor-4.17-amd64"], check=False)
        q = run(["qemu-system-x86_64", "--version"], check=False)
        return {"xen": "%s (nested in QEMU/TCG)" % (p.stdout.strip() or "unknown"),
                "qemu": (q.stdout.strip().splitlines() or ["unknown"])[0]}

    def run_all(self, outdir, workdir, add_row):
        b, o = self.bench, self.bench.o
        jd = os.path.join(workdir, "xen-jobs")
        os.makedirs(jd)
        jobs, lines, files, total = [], [], [], 0
        for k, cell in enumerate(b.cells, 1):
            for r in range(1, o.runs + 1):
                jid = len(jobs) + 1
                text, _ = job_script(b, cell, r, jd)
                script = os.path.join(jd, "job-%d.sh" % jid)
                with open(script, "w") as f:
                    f.write(text)
                files.append(script)
                # the job's own timeout; a guest also needs ~30 s to start
                lines.append("%d %s job-%d.sh %d %d %d %d %d" % (
                    jid, cell.where, jid, cell.wce, cell.barrier, b.disk_mib, o.mem, o.timeout))
                total += o.timeout + (60 if cell.where == "domU" else 10)
                jobs.append((jid, k, cell, r))
        with open(os.path.join(jd, "jobs"), "w") as f:
            f.write("\n".join(lines) + "\n")
        build = os.environ.get("BLKBENCH_XEN_BUILD") or os.path.join(workdir, "xen-build")
        env = dict(os.environ, B=build, top_srcdir=b.paths["srcdir"],
                   BLKBACKD=b.tools.path("blkbackd"),
                   FSMARK=b.tools.optional("fsmark") or "/nonexistent",
                   BLKFRONT_TEST=b.tools.optional("blkfront-test") or "/nonexistent")
        res = os.path.join(workdir, "xen-out")
        argv = ["bash", os.path.join(self.xendir, "run-in-domu.sh"), "-J",
                os.path.join(jd, "jobs"), "-o", res, "-t", str(total)]
        for s in files:
            argv += ["-f", s]
        info("%s: %d jobs in one boot of Xen under QEMU/TCG (build and boot log in %s/logs)"
             % (self.name, len(jobs), build))
        log = os.path.join(build, "logs", "run-in-domu.log")
        with open(os.path.join(outdir, "raw", "run-in-domu.out"), "w") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                self._progress(p, log, jobs)
            finally:
                if p.poll() is None:
                    # run-in-domu.sh's QEMU runs under timeout(1) in its session
                    os.killpg(p.pid, 15)
                    p.wait()
        if os.path.exists(log):
            shutil.copyfile(log, os.path.join(outdir, "raw", "xen-console.log"))
        errors = []
        starts = self._job_times(log)
        for jid, k, cell, r in jobs:
            rundir = os.path.join(outdir, "raw", "%s-run%d" % (cell.name, r))
            os.makedirs(rundir, exist_ok=True)
            shutil.copyfile(os.path.join(jd, "job-%d.sh" % jid), os.path.join(rundir, "job.sh"))
            try:
                row, text, csvline = _finish_job(b, k, cell, r, os.path.join(res, str(jid)),
                                                 rundir, starts.get(jid, 0.0), self.name)
            except BenchError as e:
                errors.append(str(e))
                continue
            add_row(cell, row, text, csvline)
        if p.returncode != 0 and not errors:
            errors.append("run-in-domu.sh exit %d (see %s)" % (
                p.returncode, os.path.join(outdir, "raw", "run-in-domu.out")))
        if errors:
            raise BenchError("; ".join(errors))

    @staticmethod
    def _job_times(log):
        """Seconds each job took, from the console's timestamps."""
        t = {}
        begin = {}
        try:
            with open(log, errors="replace") as f:
                for line in f:
                    m = re.match(r"\[\s*([0-9.]+)\] @@J-(BEGIN|END) (\d+)", line)
                    if m:
                        if m.group(2) == "BEGIN":
                            begin[int(m.group(3))] = float(m.group(1))
                        elif int(m.group(3)) in begin:
                            t[int(m.group(3))] = float(m.group(1)) - begin[int(m.group(3))]
        except OSError:
            pass
        return t

    def _progress(self, p, log, jobs):
        """A progress line per job, as the console reports it starting.
        The ETA sums, over the jobs left, the mean time of the finished
        jobs of the same place (a domU row also creates a guest)."""
        t0, pos, last = time.monotonic(), 0, None
        took = {"dom0": [], "domU": []}
        while p.poll() is None:
            time.sleep(1)
            try:
                with open(log, errors="replace") as f:
                    f.seek(pos)
                    chunk = f.read()
                    pos = f.tell()
            except OSError:
                continue
            for m in re.finditer(r"@@J-BEGIN (\d+)", chunk):
                jid = int(m.group(1))
                if not 1 <= jid <= len(jobs):
                    continue
                now = time.monotonic()
                if last:
                    took[last[0]].append(now - last[1])
                _, k, cell, r = jobs[jid - 1]
                last = (cell.where, now)
                done = [t for v in took.values() for t in v]
                if done:
                    mean = {w: (sum(v) / len(v) if v else sum(done) / len(done))
                            for w, v in took.items()}
                    eta = _fmt(sum(mean[c.where] for _, _, c, _ in jobs[jid - 1:]))
                else:
                    eta = "?"
                info("[cell %d/%d run %d/%d] %s (%s): elapsed %s, ETA %s"
                     % (k, len(self.bench.cells), r, self.bench.o.runs, cell.name,
                        self.name, _fmt(now - t0), eta))


def nested_missing(xendir, script, files):
    """What this machine lacks to boot nested Xen from the source tree's
    tests/xen (XENDIR, None for an installed blkbench) and run its SCRIPT:
    root, FILES, the commands boot.sh uses, a Debian kernel."""
    missing = []
    if os.geteuid() != 0:
        missing.append("needs root (builds initramfs images with device nodes)")
    if not xendir:
        missing.append("a source tree (an installed blkbench has none: run the "
                       "build tree's harness/blkbench for this platform)")
    elif not os.path.isfile(os.path.join(xendir, script)):
        missing.append("%s/%s (the source tree's tests/xen)" % (xendir, script))
    missing += [f for f in files if not os.path.exists(f)]
    missing += [c for c in ("qemu-system-x86_64", "cpio", "perl", "modprobe", "timeout")
                if not shutil.which(c)]
    if not any(n.startswith("vmlinuz-") for n in os.listdir("/boot")):
        missing.append("/boot/vmlinuz-* (apt-get install linux-image-amd64)")
    return missing


def _fmt(s):
    s = int(s)
    return "%d:%02d" % (s // 60, s % 60)


def _eta(el, done, total):
    return _fmt(el / done * (total - done)) if done else "?"


class XenHost:
    """A real Xen dom0 with blkbackd as its vbd backend (cannot be tested
    without Xen; every requirement is checked first)."""

    name = "xen-host"

    def __init__(self, bench):
        self.bench = bench
        # None for an installed blkbench: preflight refuses (never a
        # relative tests/xen, which would run the current directory's scripts)
        src = bench.paths["srcdir"]
        self.xendir = os.path.join(src, "tests", "xen") if src else None

    def _guest_kernel(self):
        o = self.bench.o
        k = o.guest_kernel or "/boot/vmlinuz-" + kernel_release()
        ver = re.sub(r"^vmlinuz-", "", os.path.basename(k))
        return k, ver

    def preflight(self):
        o = self.bench.o
        missing = []
        if os.geteuid() != 0:
            missing.append("needs root (xl, loop devices, mount)")
        try:
            with open("/proc/xen/capabilities") as f:
                if "control_d" not in f.read():
                    missing.append("this is not Xen's dom0 (/proc/xen/capabilities has no control_d)")
        except OSError:
            missing.append("not running on Xen: /proc/xen/capabilities is missing "
                           "(boot the Xen entry; mount -t xenfs xenfs /proc/xen)")
        if not shutil.which("xl"):
            missing.append("xl (apt-get install xen-utils-4.17)")
        if not os.path.exists("/etc/xen/scripts/block-blkbackd"):
            missing.append("/etc/xen/scripts/block-blkbackd (install backend/block-blkbackd there)")
        if not _process_running("blkbackd"):
            missing.append("no blkbackd running (start it: blkbackd --transport=xen)")
        if os.path.isdir("/sys/module/xen_blkback"):
            missing.append("kernel xen-blkback is loaded and would serve the vbd too "
                           "(rmmod xen-blkback)")
        if not o.backing:
            missing.append("--backing LV|FILE (the disk of both rows; its contents are destroyed)")
        elif not (os.path.isfile(o.backing) or _is_blockdev(o.backing)):
            missing.append("--backing %s: not a block device or a file" % o.backing)
        elif _mounted(o.backing):
            missing.append("--backing %s is mounted" % o.backing)
        k, ver = self._guest_kernel()
        if not os.path.isfile(k):
            missing.append("a guest kernel: %s (--guest-kernel)" % k)
        elif not os.path.isdir("/lib/modules/" + ver):
            missing.append("/lib/modules/%s (the guest kernel's modules)" % ver)
        if not self.xendir:
            missing.append("a source tree (an installed blkbench has none: run the "
                           "build tree's harness/blkbench for this platform)")
        elif not os.path.isfile(os.path.join(self.xendir, "build-initramfs.sh")):
            missing.append("%s/build-initramfs.sh (the source tree's tests/xen)" % self.xendir)
        missing += [c for c in ("cpio", "losetup", "/bin/busybox", "/usr/sbin/bonnie++",
                                "/sbin/mke2fs", "/sbin/mkfs.xfs", "/sbin/blkdiscard")
                    if not (os.path.exists(c) if c.startswith("/") else shutil.which(c))]
        if missing:
            raise BenchError(_missing_message(self.name, missing, "see blkbench(1), Platforms"))
        _check_workloads(self.bench, self.name)

    def tool_versions(self):
        p = run(["xl", "info"], check=False)
        m = re.search(r"^xen_version\s*:\s*(\S+)", p.stdout, re.M)
        return {"xen": m.group(1) if m else "unknown"}

    def run_all(self, outdir, workdir, add_row):
        b, o = self.bench, self.bench.o
        jd = os.path.join(workdir, "xen-jobs")
        os.makedirs(jd)
        kernel, ver = self._guest_kernel()
        gb = os.path.join(workdir, "guest")
        info("%s: building the guest's initramfs for %s (log %s/build.log)" % (self.name, ver, gb))
        os.makedirs(gb)
        with open(os.path.join(gb, "build.log"), "w") as lg:
            env = dict(os.environ, B=gb, DOMU_ONLY="1", K=ver, SRCDIR=self.xendir,
                       TOP_SRCDIR=b.paths["srcdir"],
                       FSMARK=b.tools.optional("fsmark") or "/nonexistent",
                       BLKFRONT_TEST="/nonexistent")
            rc = subprocess.call(["bash", os.path.join(self.xendir, "build-initramfs.sh")],
                                 stdout=lg, stderr=subprocess.STDOUT, env=env)
        if rc != 0:
            raise BenchError("building the guest initramfs failed (see %s/build.log)" % gb)
        gnu = os.path.join(workdir, "gnu")
        os.makedirs(gnu)
        for name in ("mke2fs", "mkfs.xfs", "bonnie++"):
            os.symlink(b.tools.path(name), os.path.join(gnu, name))
        if b.tools.optional("fsmark"):
            os.symlink(b.tools.path("fsmark"), os.path.join(gnu, "fsmark"))
        total = len(b.cells) * o.runs
        done, t_start = 0, time.monotonic()
        for k, cell in enumerate(b.cells, 1):
            for r in range(1, o.runs + 1):
                el = time.monotonic() - t_start
                info("[cell %d/%d run %d/%d] %s (%s): elapsed %s, ETA %s"
                     % (k, len(b.cells), r, o.runs, cell.name, self.name, _fmt(el),
                        _eta(el, done, total)))
                jid = done + 1
                text, _ = job_script(b, cell, r, jd)
                script = os.path.join(jd, "job-%d.sh" % jid)
                with open(script, "w") as f:
                    f.write(text)
                rundir = os.path.join(outdir, "raw", "%s-run%d" % (cell.name, r))
                os.makedirs(rundir, exist_ok=True)
                shutil.copyfile(script, os.path.join(rundir, "job.sh"))
                res = os.path.join(jd, "out-%d" % jid)
                os.makedirs(res)
                t0 = time.monotonic()
                with open(os.path.join(rundir, "commands.log"), "w") as log, Cleanup() as cl:
                    if cell.where == "dom0":
                        self._dom0(cell, jid, script, res, gnu, cl, log)
                    else:
                        self._domu(cell, jid, script, res, gb, kernel, cl, log)
                row, text, csvline = _finish_job(b, k, cell, r, res, rundir,
                                                 time.monotonic() - t0, self.name)
                add_row(cell, row, text, csvline)
                done += 1

    def _dom0(self, cell, jid, script, res, gnu, cl, log):
        o = self.bench.o
        argv = ["losetup", "--find", "--show"]
        if _is_blockdev(o.backing):
            argv.append("--direct-io=on")
        dev = run(argv + [o.backing], log=log).stdout.strip()
        if not dev.startswith("/dev/loop"):
            raise BenchError("losetup on %s printed %r" % (o.backing, dev))
        cl.push("detach %s" % dev, run, ["losetup", "-d", dev], log, False)
        wc = "/sys/block/%s/queue/write_cache" % os.path.basename(dev)
        # the kernel keeps this mode for the loop device's next user:
        # give it back as attached (write back) before detaching
        cl.push("restore %s" % wc, _write_sys, wc, "write back")
        _write_sys(wc, "write back" if cell.wce else "write through")
        mnt = os.path.join(os.path.dirname(script), "mnt-%d" % jid)
        os.makedirs(mnt)
        cl.push("umount %s" % mnt, _umount_quiet, mnt)
        cg = MemCgroup(o.mem, "xen-%d" % jid)
        cl.push("remove cgroup %s" % cg.path, cg.destroy)
        env = dict(os.environ, XT_GNU=gnu, XT_DISK=dev, XT_MNT=mnt, XT_OUT=res, XT_CGROUP="none")
        with open(os.path.join(res, "stdout"), "w") as out:
            try:
                rc = subprocess.call(cg.wrap(["sh", script]), stdout=out,
                                     stderr=subprocess.STDOUT, env=env, timeout=o.timeout)
            except subprocess.TimeoutExpired:
                cg.kill_all()
                rc = 124
        with open(os.path.join(res, "rc"), "w") as f:
            f.write("%d\n" % rc)

    def _domu(self, cell, jid, script, res, gb, kernel, cl, log):
        o = self.bench.o
        jd = os.path.dirname(script)
        ov = os.path.join(jd, "ov-%d" % jid)
        os.makedirs(os.path.join(ov, "xt"))
        shutil.copyfile(script, os.path.join(ov, "xt", os.path.basename(script)))
        ramdisk = os.path.join(jd, "domu-%d.cpio" % jid)
        with open(ramdisk, "wb") as out:
            with open(os.path.join(gb, "domu.cpio"), "rb") as f:
                shutil.copyfileobj(f, out)
            out.flush()
            lst = subprocess.run(["find", "."], cwd=ov, stdout=subprocess.PIPE, check=True).stdout
            subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=ov, input=lst,
                           stdout=out, check=True)
        outdisk = os.path.join(jd, "out-%d.img" % jid)
        with open(outdisk, "w") as f:
            f.truncate(16 << 20)
        name = "blkbench-%d-%d" % (os.getpid(), jid)
        cfg = os.path.join(jd, "%s.cfg" % name)
        with open(cfg, "w") as f:
            f.write('name = "%s"\ntype = "pv"\nkernel = "%s"\nramdisk = "%s"\n' % (name, kernel, ramdisk))
            f.write('extra = "console=hvc0 rdinit=/init loglevel=4 xt.tag=%s xt.run=job:xvda:%s:xvdb"\n'
                    % (name, os.path.basename(script)))
            f.write("memory = %d\nvcpus = 1\non_crash = \"destroy\"\n" % max(256, o.mem + 192))
            f.write("disk = [ 'vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=%s',\n"
                    "         'vdev=xvdb, format=raw, access=rw, script=block-blkbackd, target=%s' ]\n"
                    % (o.backing, outdisk))
        env = dict(os.environ, BLKBACKD_CACHE="writeback" if cell.wce else "writethrough",
                   BLKBACKD_FLUSH_MODE=_flush_mode(cell))
        cl.push("xl destroy %s" % name, _xl_destroy, name, log)
        run(["xl", "create", cfg], log=log, env=env, timeout=120)
        deadline = time.monotonic() + o.timeout + 60
        while run(["xl", "domid", name], check=False).returncode == 0:
            if time.monotonic() > deadline:
                raise BenchError("guest %s still running after --timeout %d s (xl console %s)"
                                 % (name, o.timeout, name))
            time.sleep(1)
        _untar_flat(outdisk, res, name)


def _untar_flat(archive, dest, guest):
    """The guest's XT_OUT: regular files only, by their base names."""
    try:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if m.isfile():
                    src = t.extractfile(m)
                    with open(os.path.join(dest, os.path.basename(m.name)), "wb") as f:
                        shutil.copyfileobj(src, f)
    except (tarfile.TarError, OSError) as e:
        raise BenchError("guest %s returned no output on xvdb (%s): %s"
                         % (guest, archive, e)) from None


def _process_running(comm):
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/comm" % pid) as f:
                    if f.read().strip() == comm:
                        return True
            except OSError:
                pass
    return False


def _write_sys(path, value):
    with open(path, "w") as f:
        f.write(value)


def _is_blockdev(path):
    import stat
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def _mounted(path):
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            return any(os.path.realpath(ln.split()[0]) == real for ln in f if ln.strip())
    except OSError:
        return False


def _umount_quiet(mnt):
    if os.path.ismount(mnt):
        run(["umount", mnt], check=False)


def _xl_destroy(name, log):
    if run(["xl", "domid", name], check=False).returncode == 0:
        warn("guest %s still there: xl destroy" % name)
        run(["xl", "destroy", name], log=log, check=False)


def platform(bench):
    """The platform object of bench.o.platform, or None for sim."""
    p = bench.o.platform
    if p not in PLATFORMS:
        raise BenchError("--platform %s: not one of %s" % (p, ", ".join(PLATFORMS)))
    if p == "sim":
        if bench.o.guest_kernel:
            raise BenchError("--guest-kernel is for --platform xen-host only")
        if bench.o.backing and not bench.o.backing.startswith("rbd:"):
            raise BenchError("--backing %s: on --platform sim only an RBD image "
                             "(rbd:POOL/IMAGE[:conf=PATH][:id=USER]); the other rows "
                             "use a file of their own" % bench.o.backing)
        return None
    if p == "xen-nested" and (bench.o.backing or bench.o.guest_kernel):
        raise BenchError("--backing and --guest-kernel are for --platform xen-host only "
                         "(xen-nested backs every disk with a file on the nested dom0's tmpfs)")
    return {"xen-nested": XenNested, "xen-host": XenHost}[p](bench)
