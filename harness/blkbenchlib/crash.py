# SPDX-License-Identifier: GPL-2.0-or-later
"""blkbench crash: the power-cut campaign, each backend judged from below.

  sim         blkcrash run: blkbackd over xensim, recorded at its own
              store layer (blkcrash-run(1)); the campaign of the demo's
              power-cut check, in full unless --quick.
  xen-nested  one boot of Xen 4.17 in QEMU/TCG (tests/xen, phase lw with
              xt.lw=full): every backend's disk is the kernel's
              dm-log-writes target over a RAM disk, so what reaches the
              "disk" is logged in order whatever backend wrote it.  Each
              round is one guest: blkfront-test verify (its guest log says
              what each flush promised) or ext4 with files fsync'd; then
              blkcrash check / fsck / replay --durable judge the log.
              Backends: blkbackd, kernel xen-blkback (phy:), QEMU qdisk;
              configurations that honour flushes must show no violation,
              those that drop them (blkbackd --unsafe-ignore-flush, a
              guest mounted nobarrier) must be caught.

The table comes from the rounds' "@@LW key=value..." console lines
(dom0-init.sh lw_line); a round missing from the console is a failure,
never a silent gap.  Exit 0: every round gave the verdict its
configuration must; 1: one did not, or a round is missing; 2: could not
run.
"""

import json
import os
import re
import shutil
import subprocess
import time

from .system import BenchError, info, kernel_release, run
from .xen import _is_blockdev, _mounted, _process_running, nested_missing

# the campaign's rounds in the order phase lw runs them (xt.lw=full)
FULL_ROUNDS = ("bbd", "fsb", "fsn", "ign", "ifs", "kb", "kfb", "kfn", "qd", "qfb", "qfn")
BACKEND_NAMES = {"blkbackd": "blkbackd", "kernel-blkback": "kernel xen-blkback (phy:)",
                 "qdisk": "QEMU qdisk"}
CONFIG_NAMES = {"honoured": "flushes honoured", "guest-nobarrier": "guest mounts -o nobarrier",
                "unsafe-ignore-flush": "--unsafe-ignore-flush"}


def parse_console(text):
    """The @@LW lines of a console log: a list of dicts, in order."""
    rounds = []
    for line in text.splitlines():
        i = line.find("@@LW name=")
        if i < 0:
            continue
        r = {}
        for kv in line[i + 5:].split():
            k, sep, v = kv.partition("=")
            if sep:
                r[k] = v
        rounds.append(r)
    return rounds


def judge(rounds, expected):
    """(ok, problems): every expected round present once with a verdict
    that is not FAIL, and no round beyond them."""
    problems = []
    seen = {}
    for r in rounds:
        seen.setdefault(r.get("name"), []).append(r)
    for n in expected:
        got = seen.get(n, [])
        if not got:
            problems.append("round %s: no result on the console (did not run to its end)" % n)
        elif got[-1].get("verdict") not in ("pass", "caught"):
            r = got[-1]
            problems.append("round %s (%s, %s, %s): verdict %s, must be %s"
                            % (n, r.get("backend"), r.get("config"), r.get("workload"),
                               r.get("verdict"), r.get("want")))
    for n in seen:
        if n not in expected:
            problems.append("round %s: not one of this campaign's rounds" % n)
    return not problems, problems


def _counts(r):
    """The table's crash-point and violation cells of a round."""
    if r.get("workload") == "blkfront-verify":
        return ("%s flushes, %s promised" % (r.get("guest_flushes", "?"), r.get("promised", "?")),
                "%s lost" % r.get("lost", "?"), "-")
    lost, _, total = r.get("fsync_lost", "?/?").partition("/")
    return ("%s points" % r.get("points", "?"),
            "%s of %s files lost" % (lost, total or "?"),
            "%s of %s" % (r.get("fsck_failed", "?"), r.get("points", "?")))


def render_table(rounds):
    head = ("backend", "configuration", "guest workload", "host log", "crash points",
            "fsync/flush check", "fsck not clean", "must be", "verdict", "s")
    rows = [head]
    for r in rounds:
        pts, viol, fsck = _counts(r)
        rows.append((BACKEND_NAMES.get(r.get("backend"), r.get("backend", "?")),
                     CONFIG_NAMES.get(r.get("config"), r.get("config", "?")),
                     r.get("workload", "?"),
                     "%s rec, %s fl" % (r.get("records", "?"), r.get("flushes", "?")),
                     pts, viol, fsck, r.get("want", "?"),
                     {"caught": "CAUGHT"}.get(r.get("verdict"), r.get("verdict", "?")),
                     r.get("secs", "?")))
    w = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    return ["  ".join(str(c).ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]


def _sim(ns, tools, outdir):
    blkcrash = tools.path("blkcrash")
    argv = [blkcrash, "run"] + (["--quick"] if ns.quick else [])
    info("platform sim: %s (output in %s/crash.txt)" % (" ".join(argv), outdir))
    with open(os.path.join(outdir, "crash.txt"), "w") as f:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, stdin=subprocess.DEVNULL)
        f.write(p.stdout)
    print(p.stdout, end="")
    return 0 if p.returncode == 0 else (1 if p.returncode == 1 else 2)


class CrashNested:
    """The campaign in one boot of nested Xen (tests/xen phase lw)."""

    FILES = ("/boot/xen-4.17-amd64.gz", "/usr/lib/xen-4.17/bin/xl",
             "/usr/lib/xen-4.17/bin/xenstored", "/bin/busybox", "/sbin/mke2fs",
             "/usr/libexec/xen-qemu-system-i386")

    def __init__(self, ns, paths, tools):
        self.ns, self.paths, self.tools = ns, paths, tools
        src = paths["srcdir"]
        self.xendir = os.path.join(src, "tests", "xen") if src else None

    def preflight(self, base):
        missing = nested_missing(self.xendir, "lw-rounds.sh", self.FILES)
        for prog in ("blkbackd", "blkcrash", "blkfront-test"):
            if not self.tools.optional(prog):
                missing.append("%s (build the tree with make)" % prog)
        if missing:
            raise BenchError("--platform xen-nested cannot run here; missing:\n  "
                             + "\n  ".join(missing) + "\n(as root: tests/xen/install-deps)")

    @staticmethod
    def expected():
        return FULL_ROUNDS

    def run(self, outdir, workdir):
        ns, t = self.ns, self.tools
        build = os.environ.get("BLKBENCH_XEN_BUILD") or os.path.join(workdir, "xen-build")
        os.makedirs(build, exist_ok=True)
        blkbackd = t.path("blkbackd")
        env = dict(os.environ, B=build, SRCDIR=self.xendir, TOP_SRCDIR=self.paths["srcdir"],
                   TOP_BUILDDIR=os.path.dirname(os.path.dirname(blkbackd)),
                   BLKBACKD=blkbackd, BLKCRASH=t.path("blkcrash"),
                   BLKFRONT_TEST=t.path("blkfront-test"),
                   FSMARK=t.optional("fsmark") or "/nonexistent")
        if not os.path.isfile(os.path.join(build, "dom0.cpio")):
            info("xen-nested: building the initramfs images (log %s/build.log)" % build)
            _build_initramfs(self.xendir, build, env, "the initramfs images",
                             ["cc", "-O2", "-o", os.path.join(build, "xt-holes"),
                              os.path.join(self.xendir, "xt-holes.c")])
        serial = os.path.join(outdir, "serial.log")
        # phase lw's quick boot took 131-376 s; the full campaign has
        # twice its rounds, each ext4 round's fsck grows with --points
        timeout = ns.timeout or 2400
        info("xen-nested: one boot of Xen under QEMU/TCG, phase lw with xt.lw=full, "
             "%d crash points per ext4 round (timeout %d s); console in %s"
             % (ns.points, timeout, serial))
        # boot.sh writes the console to serial itself
        return _run_following(["bash", os.path.join(self.xendir, "boot.sh"), serial,
                               "xt.phases=lw", "xt.lw=full", "xt.lwpoints=%d" % ns.points],
                              dict(env, TIMEOUT=str(timeout)), serial, subprocess.DEVNULL)


def _build_initramfs(xendir, build, env, what, first=None):
    """tests/xen/build-initramfs.sh into BUILD (after the command FIRST,
    if any), its output in BUILD/build.log; BenchError naming WHAT if
    either fails."""
    with open(os.path.join(build, "build.log"), "w") as lg:
        rc = subprocess.call(first, stdout=lg, stderr=subprocess.STDOUT) if first else 0
        if rc == 0:
            rc = subprocess.call(["bash", os.path.join(xendir, "build-initramfs.sh")],
                                 stdout=lg, stderr=subprocess.STDOUT, env=env,
                                 stdin=subprocess.DEVNULL)
    if rc != 0:
        raise BenchError("building %s failed (see %s/build.log)" % (what, build))


def _run_following(argv, env, serial, out):
    """Run ARGV (its output to OUT) in a session of its own, a line per
    round as its console SERIAL shows them; stopped with its whole
    session if blkbench is.  (console text, exit status, whether it
    reached ALL-DONE, seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _follow(p, serial)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 15)
            p.wait()
    secs = time.monotonic() - t0
    with open(serial, errors="replace") as f:
        text = f.read()
    return text, p.returncode, re.search(r"@@M .*ALL-DONE", text) is not None, secs


def _follow(p, serial):
    """A line per finished round while P runs, from its console SERIAL."""
    pos = 0
    while p.poll() is None:
        time.sleep(2)
        try:
            with open(serial, errors="replace") as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
        except OSError:
            continue
        for m in re.finditer(r"@@LW name=(\S+) backend=(\S+) config=(\S+) workload=(\S+)"
                             r" want=(\S+) verdict=(\S+) secs=(\S+)", chunk):
            info("round %s: %s, %s, %s: %s (must be %s), %s s" % m.group(1, 2, 3, 4, 6, 5, 7))


def _binary(path):
    """Which binary ran, for the record: its path, sha256 and what it
    says of itself (--version; blkbackd's names its git revision)."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    try:
        p = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=10, stdin=subprocess.DEVNULL)
        ver = (p.stdout.strip().splitlines() or ["?"])[0] if p.returncode == 0 else "?"
    except (OSError, subprocess.TimeoutExpired):
        ver = "?"
    return {"path": path, "sha256": h.hexdigest(), "version": ver}


def cmd_crash(ns, paths, tools, new_results_dir, started):
    if ns.points < 1 or ns.points > 10000:
        raise BenchError("--points %d: from 1 to 10000" % ns.points)
    if ns.platform not in ("sim", "xen-nested", "xen-host"):
        raise BenchError("--platform %s: sim, xen-nested or xen-host" % ns.platform)
    if ns.platform != "xen-host" and (ns.data or ns.log or ns.guest_kernel or ns.backends):
        raise BenchError("--data, --log, --guest-kernel and --backends are for "
                         "--platform xen-host")
    if ns.platform != "sim" and ns.quick:
        raise BenchError("--quick is for --platform sim (the quick round on Xen is "
                         "make check-xen's phase lw)")
    if ns.platform == "sim":
        if ns.console:
            raise BenchError("--console is for the xen platforms")
        outdir = ns.out or new_results_dir(started)
        os.makedirs(outdir, exist_ok=True)
        return _sim(ns, tools, outdir)
    plat = (CrashNested if ns.platform == "xen-nested" else CrashHost)(ns, paths, tools)
    if ns.console:
        # judge a recorded run again (its table, its verdicts): nothing runs
        with open(ns.console, errors="replace") as f:
            text = f.read()
        if ns.platform == "xen-host":
            plat.backends = (ns.backends.split(",") if ns.backends else
                             [b for b in HOST_ROUNDS
                              if any(r.get("backend") == b for r in parse_console(text))])
        done = re.search(r"@@M .*ALL-DONE", text) is not None
        rc, secs = None, 0.0
        outdir = ns.out
    else:
        base = ns.workdir or os.environ.get("TMPDIR") or "/var/tmp"
        plat.preflight(base)
        outdir = ns.out or new_results_dir(started)
        os.makedirs(outdir, exist_ok=True)
        workdir = os.path.join(base, "blkbench-crash.%d" % os.getpid())
        os.makedirs(workdir)
        try:
            text, rc, done, secs = plat.run(outdir, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    rounds = parse_console(text)
    expected = plat.expected()
    ok, problems = judge(rounds, expected)
    if not done and ns.console:
        ok = False
        problems.insert(0, "the recorded run did not finish (no ALL-DONE mark in %s)"
                        % ns.console)
    elif not done:
        ok = False
        problems.insert(0, "the run did not finish (exit %s after %.0f s; console: %s)"
                        % (rc, secs, os.path.join(outdir, "serial.log")))
    lines = render_table(rounds)
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "table.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        steps = re.findall(r"@@T (lw-\S+|domu-lw\S+|blkbench-\S+) (PASS|FAIL|SKIP)(.*)", text)
        res = {"platform": ns.platform, "points": ns.points, "seconds": round(secs, 1),
               "finished": done, "ok": ok, "problems": problems,
               "expected_rounds": list(expected), "rounds": rounds,
               "steps": [{"name": n, "result": r, "detail": d.strip()} for n, r, d in steps]}
        if not ns.console:
            res["binaries"] = {n: _binary(tools.path(n))
                               for n in ("blkbackd", "blkcrash", "blkfront-test")
                               if tools.optional(n)}
        with open(os.path.join(outdir, "results.json"), "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    print("\n".join(lines))
    print()
    for p in problems:
        print("FAIL: %s" % p)
    print("power-cut campaign on %s: %s: %d rounds expected, %d caught as they must be, "
          "%d clean as they must be, %d wrong or missing%s"
          % (ns.platform, "PASS" if ok else "FAIL", len(expected),
             sum(r.get("verdict") == "caught" for r in rounds),
             sum(r.get("verdict") == "pass" for r in rounds), len(problems),
             "" if ns.console else " (%.0f s; results in %s)" % (secs, outdir)))
    return 0 if ok else 1


HOST_ROUNDS = {"blkbackd": ("bbd", "fsb", "fsn"), "kernel-blkback": ("kb", "kfb", "kfn"),
               "qdisk": ("qd", "qfb", "qfn")}
QEMU_PATHS = ("/usr/libexec/xen-qemu-system-i386", "/usr/lib/xen-4.17/bin/qemu-system-i386",
              "/usr/lib/xen/bin/qemu-system-i386")
MAX_DEV_BYTES = 4 << 30  # each round copies the log, each ext4 round the data twice


class CrashHost:
    """The campaign on this machine, a real Xen dom0 (tests/xen/crash-host.sh):
    two spare block devices under dm-log-writes, the backends this host
    runs, guests of the test initramfs."""

    def __init__(self, ns, paths, tools):
        self.ns, self.paths, self.tools = ns, paths, tools
        src = paths["srcdir"]
        self.xendir = os.path.join(src, "tests", "xen") if src else None
        self.backends = []

    def _kernel(self):
        k = self.ns.guest_kernel or "/boot/vmlinuz-" + kernel_release()
        return k, re.sub(r"^vmlinuz-", "", os.path.basename(k))

    def preflight(self, base):
        ns = self.ns
        missing = []
        if os.geteuid() != 0:
            missing.append("needs root (xl, dmsetup, the devices)")
        try:
            with open("/proc/xen/capabilities") as f:
                if "control_d" not in f.read():
                    missing.append("this is not Xen's dom0 (/proc/xen/capabilities has "
                                   "no control_d)")
        except OSError:
            missing.append("not running on Xen: /proc/xen/capabilities is missing (boot "
                           "the Xen entry; mount -t xenfs xenfs /proc/xen)")
        for c, hint in (("xl", "apt-get install xen-utils-4.17"),
                        ("dmsetup", "apt-get install dmsetup"),
                        ("mke2fs", "apt-get install e2fsprogs"),
                        ("e2fsck", "apt-get install e2fsprogs"),
                        ("blockdev", "apt-get install util-linux"),
                        ("cpio", "apt-get install cpio")):
            if not shutil.which(c):
                missing.append("%s (%s)" % (c, hint))
        if shutil.which("dmsetup") and os.geteuid() == 0:
            p = run(["dmsetup", "targets"], check=False)
            if not re.search(r"^log-writes\s", p.stdout, re.M):
                missing.append("the dm-log-writes target (modprobe dm-log-writes; "
                               "`dmsetup targets` does not list log-writes)")
        devs, need = [], 0
        for opt, val, copies in (("--data", ns.data, 2), ("--log", ns.log, 1)):
            if not val:
                missing.append("%s DEV: a spare block device (an LV of 64 MiB to 4 GiB); "
                               "its contents are destroyed" % opt)
                continue
            why, size = _spare_device(val)
            if why:
                missing.append("%s %s: %s" % (opt, val, why))
            devs.append(os.path.realpath(val))
            need += copies * size
        if len(devs) == 2 and devs[0] == devs[1]:
            missing.append("--data and --log are the same device")
        try:
            free = shutil.disk_usage(base).free
            if free < need:
                missing.append("%d MiB free in %s, an ext4 round needs %d (a copy of the log "
                               "and two of the data device; --workdir)"
                               % (free >> 20, base, need >> 20))
        except OSError as e:
            missing.append("--workdir %s: %s" % (base, e.strerror))
        for prog in ("blkcrash", "blkfront-test"):
            if not self.tools.optional(prog):
                missing.append("%s (build the tree with make)" % prog)
        k, ver = self._kernel()
        if not os.path.isfile(k):
            missing.append("a guest kernel: %s (--guest-kernel)" % k)
        elif not os.path.isdir("/lib/modules/" + ver):
            missing.append("/lib/modules/%s (the guest kernel's modules)" % ver)
        if not self.xendir:
            missing.append("a source tree (an installed blkbench has none: run the "
                           "build tree's harness/blkbench for this platform)")
        else:
            for f in ("build-initramfs.sh", "crash-host.sh", "lw-rounds.sh"):
                if not os.path.isfile(os.path.join(self.xendir, f)):
                    missing.append("%s/%s (the source tree's tests/xen)" % (self.xendir, f))
        # the backends this host runs (blkbackd refuses to start beside
        # xen-blkback, so a host has one of the two, and maybe QEMU)
        have = {"blkbackd": _process_running("blkbackd") and
                os.path.exists("/etc/xen/scripts/block-blkbackd"),
                "kernel-blkback": os.path.isdir("/sys/module/xen_blkback"),
                "qdisk": any(os.path.exists(q) for q in QEMU_PATHS)}
        want = ns.backends.split(",") if ns.backends else [b for b in HOST_ROUNDS if have[b]]
        for b in want:
            if b not in HOST_ROUNDS:
                missing.append("--backends: %s is not one of %s" % (b, ", ".join(HOST_ROUNDS)))
            elif not have[b]:
                missing.append({"blkbackd": "backend blkbackd: no blkbackd running with "
                                "/etc/xen/scripts/block-blkbackd installed",
                                "kernel-blkback": "backend kernel-blkback: xen-blkback is "
                                "not loaded (modprobe xen-blkback; not beside blkbackd)",
                                "qdisk": "backend qdisk: no QEMU for Xen (%s)"
                                % " or ".join(QEMU_PATHS)}[b])
        if not want:
            missing.append("a backend to judge: blkbackd running, xen-blkback loaded, or "
                           "QEMU for qdisk")
        if missing:
            raise BenchError("--platform xen-host cannot run here; missing:\n  "
                             + "\n  ".join(missing) + "\n(see blkbench(1), POWER-CUT CAMPAIGN)")
        self.backends = want

    def expected(self):
        return tuple(r for b in self.backends for r in HOST_ROUNDS[b])

    def run(self, outdir, workdir):
        ns, t = self.ns, self.tools
        kernel, ver = self._kernel()
        gb = os.path.join(workdir, "guest")
        os.makedirs(gb)
        info("xen-host: building the guests' initramfs for %s (log %s/build.log)" % (ver, gb))
        _build_initramfs(self.xendir, gb,
                         dict(os.environ, B=gb, DOMU_ONLY="1", K=ver, SRCDIR=self.xendir,
                              TOP_SRCDIR=self.paths["srcdir"],
                              BLKFRONT_TEST=t.path("blkfront-test"), FSMARK="/nonexistent"),
                         "the guests' initramfs")
        serial = os.path.join(outdir, "serial.log")
        env = dict(os.environ, LW_DATA=ns.data, LW_LOG=ns.log, LW_TMP=workdir,
                   GUEST_KERNEL=kernel, GUEST_RAMDISK=os.path.join(gb, "domu.cpio"),
                   BACKENDS=",".join(self.backends), LW_FSCK_POINTS=str(ns.points),
                   BLKCRASH=t.path("blkcrash"))
        info("xen-host: rounds for %s on %s (data) and %s (log), %d crash points per "
             "ext4 round; output in %s" % (", ".join(self.backends), ns.data, ns.log,
                                           ns.points, serial))
        with open(serial, "w") as out:
            return _run_following(["bash", os.path.join(self.xendir, "crash-host.sh")], env,
                                  serial, out)


def _spare_device(path):
    """(why PATH is not a spare block device of a usable size or None,
    its size in bytes or 0)."""
    if not os.path.exists(path):
        return "no such device", 0
    if not _is_blockdev(path):
        return "not a block device", 0
    if _mounted(path):
        return "mounted", 0
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        return "in use (%s: held by a mount, a dm device, md or a guest)" % e.strerror, 0
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)
    if size < 64 << 20 or size > MAX_DEV_BYTES:
        return "%d MiB: from 64 MiB to %d MiB (each round copies it)" % (
            size >> 20, MAX_DEV_BYTES >> 20), size
    return None, size

