# SPDX-License-Identifier: GPL-2.0-or-later
"""The host side of a benchmark run: commands, cleanup, cgroups, loop, mount.

Every resource blkbench takes (a daemon, a FUSE mount, a loop device, a
filesystem mount, a memory cgroup) is registered on a Cleanup stack the
moment it exists, and released in reverse order on success, on error, on
Ctrl-C and on SIGTERM/SIGHUP.  Nothing here falls back silently: a
fallback logs one line saying what and why.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time


class BenchError(Exception):
    """A failure with a message for the user (names the path/option/tool)."""


class Interrupted(BaseException):
    """SIGTERM/SIGHUP: unwinds like KeyboardInterrupt, so cleanup runs."""


# --------------------------------------------------------------------------
# messages

def info(msg):
    print("blkbench: " + msg, file=sys.stderr, flush=True)


def warn(msg):
    print("blkbench: warning: " + msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# signals and cleanup

def _raise_interrupted(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


def install_signal_handlers():
    """SIGINT raises KeyboardInterrupt (even if inherited as ignored, as in a
    shell's background job); SIGTERM/SIGHUP raise Interrupted: both unwind
    the Cleanup stacks."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_interrupted)
    signal.signal(signal.SIGHUP, _raise_interrupted)


class Cleanup:
    """A LIFO stack of release actions.

    push() as soon as a resource exists; close() runs every action even if
    some fail (each failure is logged), with SIGINT/SIGTERM/SIGHUP blocked
    so a second Ctrl-C cannot leave a half-released stack.
    """

    def __init__(self):
        self._actions = []

    def push(self, what, fn, *args, **kwargs):
        self._actions.append((what, fn, args, kwargs))

    def close(self):
        sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
        ok = True
        try:
            while self._actions:
                what, fn, args, kwargs = self._actions.pop()
                try:
                    fn(*args, **kwargs)
                except Exception as e:  # keep releasing the rest
                    ok = False
                    warn("cleanup: %s: %s" % (what, e))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return ok

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# --------------------------------------------------------------------------
# commands

def cmdline(argv):
    return " ".join(shlex.quote(str(a)) for a in argv)


def run(argv, log=None, check=True, timeout=None, **kw):
    """Run argv to completion; returns CompletedProcess with text stdout/stderr.

    log: an open file that gets the command line and its output.
    check: raise BenchError (naming the command and its stderr) on failure.
    """
    argv = [str(a) for a in argv]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, **kw)
    except FileNotFoundError:
        raise BenchError("missing tool: %s (not found in PATH)" % argv[0]) from None
    except subprocess.TimeoutExpired:
        raise BenchError("%s: timed out after %s s" % (cmdline(argv), timeout)) from None
    if log:
        log.write("$ %s\n%s%s[exit %d]\n" % (cmdline(argv), p.stdout, p.stderr, p.returncode))
        log.flush()
    if check and p.returncode != 0:
        err = (p.stderr or p.stdout).strip().splitlines()
        raise BenchError("%s failed (exit %d)%s" % (
            cmdline(argv), p.returncode, (": " + " / ".join(err[-3:])) if err else ""))
    return p


def find_tool(name, search_dirs=(), hint=None):
    """Absolute path of a program: the build tree first, then PATH."""
    for d in search_dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    p = shutil.which(name)
    if p:
        return p
    raise BenchError("missing tool: %s%s" % (name, (" (" + hint + ")") if hint else ""))


def tool_version(path, args=("--version",)):
    """First line of a tool's version output, or "unknown"."""
    try:
        p = subprocess.run([path] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=10)
        if p.returncode != 0:
            return "unknown (no %s)" % " ".join(args)
        for line in p.stdout.splitlines():
            if line.strip():
                return line.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "unknown"


class Daemon:
    """A background program in its own session (so the terminal's Ctrl-C
    reaches blkbench only, and blkbench stops daemons in order).

    stop(): SIGTERM, wait up to `grace` seconds, then SIGKILL with a
    logged line (a daemon that needs SIGKILL is a bug worth seeing).
    """

    def __init__(self, name, argv, logpath, env=None):
        self.name = name
        self.argv = [str(a) for a in argv]
        self.logpath = logpath
        self._log = open(logpath, "a")
        self._log.write("$ %s\n" % cmdline(self.argv))
        self._log.flush()
        try:
            self.proc = subprocess.Popen(self.argv, stdout=self._log, stderr=self._log,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        except FileNotFoundError:
            self._log.close()
            raise BenchError("missing tool: %s" % self.argv[0]) from None

    def alive(self):
        return self.proc.poll() is None

    def check_alive(self):
        if not self.alive():
            raise BenchError("%s exited early (status %s); see %s: %s" % (
                self.name, self.proc.returncode, self.logpath, self.tail()))

    def tail(self, n=3):
        try:
            with open(self.logpath) as f:
                lines = [ln.strip() for ln in f if ln.strip()]
            return " / ".join(lines[-n:])
        except OSError:
            return ""

    def stop(self, grace=20):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                warn("%s (pid %d) ignored SIGTERM for %d s: SIGKILL"
                     % (self.name, self.proc.pid, grace))
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def wait_until(what, cond, timeout, daemons=()):
    """Poll cond() every 50 ms until true; fail naming `what` (and any
    daemon that died meanwhile)."""
    end = time.monotonic() + timeout
    while True:
        for d in daemons:
            d.check_alive()
        if cond():
            return
        if time.monotonic() > end:
            raise BenchError("timed out after %d s waiting for %s" % (timeout, what))
        time.sleep(0.05)


# --------------------------------------------------------------------------
# memory cgroup (v1 or v2)

def _mountinfo():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.split(" - ", 1)
            pre, post = pre.split(), post.split()
            yield {"mountpoint": pre[4], "root": pre[3], "fstype": post[0],
                   "super": post[2] if len(post) > 2 else ""}


def _own_cgroups():
    """/proc/self/cgroup -> {controller or "" for v2: path}."""
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            hid, ctrls, path = line.rstrip("\n").split(":", 2)
            if hid == "0":
                own[""] = path
            for c in ctrls.split(","):
                if c:
                    own[c] = path
    return own


def detect_memory_cgroup():
    """("v2"|"v1", parent directory for our cgroups), or raise BenchError.

    v2 is used when a cgroup2 mount offers the memory controller to our
    cgroup; else a v1 hierarchy with the memory controller; else an error
    that says what was found.
    """
    own = _own_cgroups()
    mounts = list(_mountinfo())
    for m in mounts:
        if m["fstype"] == "cgroup2" and "" in own:
            parent = os.path.normpath(m["mountpoint"] + "/" + os.path.relpath(own[""], m["root"]))
            try:
                with open(os.path.join(parent, "cgroup.controllers")) as f:
                    if "memory" in f.read().split():
                        return "v2", parent
            except OSError:
                pass
    for m in mounts:
        if m["fstype"] == "cgroup" and "memory" in m["super"].split(","):
            path = own.get("memory", "/")
            parent = os.path.normpath(m["mountpoint"] + "/" + os.path.relpath(path, m["root"]))
            if os.path.isdir(parent):
                return "v1", parent
    raise BenchError("no memory cgroup controller: neither a cgroup2 mount offering "
                     "'memory' nor a cgroup v1 'memory' hierarchy in /proc/self/mountinfo")


class MemCgroup:
    """A memory-limited cgroup that the workload (and only it) runs in.

    The FUSE daemon, blkbackd and xensim are started by blkbench outside
    it: a daemon serving the filesystem's writeback must never be made to
    reclaim inside the limit it is helping to enforce (deadlock).
    """

    def __init__(self, mem_mib, tag):
        self.version, parent = detect_memory_cgroup()
        self.path = os.path.join(parent, "blkbench-%d-%s" % (os.getpid(), tag))
        self.limit = mem_mib * 1024 * 1024
        if self.version == "v2":
            self._enable_v2_memory(parent)
        try:
            os.mkdir(self.path)
        except OSError as e:
            raise BenchError("cannot create cgroup %s: %s" % (self.path, e.strerror)) from None
        try:
            if self.version == "v2":
                self._write("memory.max", str(self.limit))
                if os.path.exists(os.path.join(self.path, "memory.swap.max")):
                    self._write("memory.swap.max", "0")
            else:
                self._write("memory.limit_in_bytes", str(self.limit))
        except BenchError:
            self.destroy()
            raise

    @staticmethod
    def _enable_v2_memory(parent):
        ctl = os.path.join(parent, "cgroup.subtree_control")
        with open(ctl) as f:
            if "memory" in f.read().split():
                return
        try:
            with open(ctl, "w") as f:
                f.write("+memory")
        except OSError as e:
            raise BenchError("cannot enable the memory controller in %s: %s "
                             "(cgroup v2 forbids it in a cgroup with processes; "
                             "run blkbench from a leaf cgroup's parent)" % (ctl, e.strerror)) from None

    def _write(self, name, value):
        p = os.path.join(self.path, name)
        try:
            with open(p, "w") as f:
                f.write(value)
        except OSError as e:
            raise BenchError("cannot write %s to %s: %s" % (value, p, e.strerror)) from None

    def wrap(self, argv):
        """argv that enters this cgroup, then execs argv."""
        return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"',
                self.path] + [str(a) for a in argv]

    def pids(self):
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                return [int(x) for x in f.read().split()]
        except FileNotFoundError:
            return []

    def peak_bytes(self):
        name = "memory.peak" if self.version == "v2" else "memory.max_usage_in_bytes"
        try:
            with open(os.path.join(self.path, name)) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def oom_kills(self):
        """How many processes the kernel's OOM killer has killed in this
        cgroup: "oom_kill N" of memory.events (v2) or memory.oom_control
        (v1, Linux >= 4.13).  None if the kernel does not say."""
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        try:
            with open(os.path.join(self.path, name)) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
        except (OSError, ValueError):
            pass
        return None

    def kill_all(self, timeout=60):
        """SIGKILL everything in the cgroup and wait until it is empty.

        A killed workload leaves only when the I/O it waits for in D
        state (fsync, a page under writeback) completes: through the
        ring on a loaded 2-CPU machine that has taken more than 10 s, so
        the wait is long, and says so after 5 s."""
        t0 = time.monotonic()
        end, said = t0 + timeout, False
        while True:
            pids = self.pids()
            if not pids:
                return
            if not said and time.monotonic() - t0 > 5:
                info("waiting for %d killed process(es) in %s to finish their I/O"
                     % (len(pids), self.path))
                said = True
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() > end:
                raise BenchError("processes %s in %s survive SIGKILL (stuck in I/O?)"
                                 % (pids, self.path))
            time.sleep(0.05)

    def destroy(self):
        if not os.path.isdir(self.path):
            return
        self.kill_all()
        # an exiting task can keep the cgroup busy a little after it has
        # left cgroup.procs
        end = time.monotonic() + 30
        while True:
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if time.monotonic() > end:
                    raise BenchError("cannot remove cgroup %s: %s" % (self.path, e.strerror)) from None
                time.sleep(0.05)


# --------------------------------------------------------------------------
# backing files and loop devices

def make_backing(path, mib, prefill, log):
    """A fresh backing file of MIB MiB.  sparse: truncated, so every first
    write to a block allocates it (on wce0 an O_DSYNC allocating write
    commits the host filesystem's journal, which no real disk does);
    zero: every block written (and made durable) before the run, as the
    blocks of a disk exist before anyone writes them."""
    t0 = time.monotonic()
    with open(path, "wb") as f:
        if prefill == "zero":
            chunk = bytes(1 << 20)
            for _ in range(mib):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        else:
            f.truncate(mib << 20)
    alloc = os.stat(path).st_blocks * 512 >> 20
    if prefill == "zero" and alloc < mib:
        raise BenchError("--prefill zero: %s has %d of its %d MiB allocated after "
                         "writing zeros (does the host filesystem compress or dedupe?)"
                         % (path, alloc, mib))
    log.write("# backing %s: %d MiB, %s, %d MiB allocated (%.1f s)\n"
              % (path, mib, prefill, alloc, time.monotonic() - t0))
    log.flush()


class LoopDevice:
    """losetup --direct-io=on FILE; detached by detach()."""

    def __init__(self, path, log):
        p = run(["losetup", "--find", "--show", "--direct-io=on", path], log=log)
        self.dev = p.stdout.strip()
        if not self.dev.startswith("/dev/loop"):
            raise BenchError("losetup on %s printed %r, not a loop device" % (path, self.dev))
        self.backing = path
        self.name = os.path.basename(self.dev)
        self._bdi_saved = None
        # A reused loop device keeps the write_cache mode its last user set
        # (seen on Linux 6.18): "write through" would make the block layer
        # drop every flush of the filesystem on top.  A fresh attach means
        # the default, write back.
        if self.write_cache() == "write through":
            self.set_write_cache("write back")
        # ... and a read-only flag its last user set (blockdev --setro:
        # BLKROSET outlives the detach), under which mkfs fails
        if self._read_sys("ro") == "1":
            run(["blockdev", "--setrw", self.dev], log=log)
            if self._read_sys("ro") == "1":
                raise BenchError("%s stays read-only after blockdev --setrw" % self.dev)
        self.dio = self._read_sys("loop/dio") == "1"
        if not self.dio:
            warn("%s on %s: direct I/O refused by the backing file; the loop "
                 "device caches in the page cache (results not comparable)"
                 % (self.dev, path))

    def set_write_cache(self, mode, log=None):
        """Set queue/write_cache to "write back" or "write through" (what
        a guest kernel's disk driver decides from its disk: the kernel
        sends flushes and FUA only to a write-back queue).  Read back and
        checked; detach() gives the device back in "write back"."""
        path = "/sys/block/%s/queue/write_cache" % self.name
        try:
            with open(path, "w") as f:
                f.write(mode)
        except OSError as e:
            raise BenchError("cannot write %r to %s: %s" % (mode, path, e.strerror)) from None
        got = self._read_sys("queue/write_cache")
        if got != mode:
            raise BenchError("%s reads %r after writing %r" % (path, got, mode))
        if log:
            log.write("# %s: %s\n" % (path, mode))
            log.flush()

    def write_cache(self):
        return self._read_sys("queue/write_cache")

    def _read_sys(self, rel):
        try:
            with open("/sys/block/%s/%s" % (self.name, rel)) as f:
                return f.read().strip()
        except OSError:
            return None

    def schedulers(self):
        text = self._read_sys("queue/scheduler") or ""
        return [s.strip("[]") for s in text.split()], \
            (re.search(r"\[([^\]]+)\]", text) or [None, None])[1]

    def set_scheduler(self, sched):
        avail, _ = self.schedulers()
        if sched not in avail:
            raise BenchError("I/O scheduler %r is not offered by %s (available: %s)"
                             % (sched, self.dev, " ".join(avail) or "none"))
        with open("/sys/block/%s/queue/scheduler" % self.name, "w") as f:
            f.write(sched)

    def limit_inflight(self, max_bytes):
        """Bound the bytes this device can have in flight (under writeback).

        cgroup v1 has no per-cgroup dirty throttling, and reclaim from
        GFP_NOFS allocations (a journaling filesystem's) cannot wait for
        writeback: a small memory cgroup whose pages are all under writeback
        on a deep queue gets OOM-killed.  Keeping requests x request size
        below a quarter of the limit avoids that; it applies to every
        where alike.  Returns (nr_requests, max_sectors_kb).
        """
        kb = min(int(self._read_sys("queue/max_sectors_kb") or 512), 512)
        nr = max(4, min(128, max_bytes // (kb * 1024)))
        for rel, val in (("queue/max_sectors_kb", kb), ("queue/nr_requests", nr)):
            self._write_sys(rel, val)
        return int(self._read_sys("queue/nr_requests")), int(self._read_sys("queue/max_sectors_kb"))

    def limit_dirty(self, max_bytes, log=None):
        """Throttle writers of this device at max_bytes dirty + under
        writeback (the device's bdi: strict_limit and max_bytes, Linux >=
        6.2), whatever the global vm.dirty_* thresholds are.

        What cgroup v1 lacks: its memory cgroups have no dirty throttling
        of their own (v2 has), so with 24 GiB of host RAM a writer can
        fill its small cgroup with dirty pages and pages under writeback
        to a slow (write-through) disk.  Reclaim cannot write those back,
        and a journaling filesystem's GFP_NOFS|__GFP_NOFAIL allocation
        cannot wait for the writeback either, so the cgroup's OOM killer
        takes the workload (seen once in test-harness-e2e, --mem 32).  A
        guest kernel with that much RAM would throttle at its
        vm.dirty_ratio share of it, too.  detach() restores the bdi.
        Returns the max_bytes now in effect, or None (logged) if the
        kernel has no such knobs."""
        bdi = "/sys/block/%s/bdi" % self.name
        if not os.path.exists(os.path.join(bdi, "strict_limit")) or \
                not os.path.exists(os.path.join(bdi, "max_bytes")):
            warn("%s: the kernel has no per-device dirty limit (%s/strict_limit, "
                 "max_bytes: Linux >= 6.2); the workload's memory cgroup may see the "
                 "OOM killer under heavy writes" % (self.dev, bdi))
            return None
        if self._bdi_saved is None:
            self._bdi_saved = [(rel, self._read_sys("bdi/" + rel))
                               for rel in ("max_ratio_fine", "strict_limit")]
        for rel, val in (("max_bytes", max_bytes), ("strict_limit", 1)):
            self._write_sys("bdi/" + rel, val)
        if log:
            log.write("# %s/max_bytes %d, strict_limit 1\n" % (bdi, max_bytes))
            log.flush()
        return int(self._read_sys("bdi/max_bytes"))

    def _write_sys(self, rel, val):
        path = "/sys/block/%s/%s" % (self.name, rel)
        try:
            with open(path, "w") as f:
                f.write(str(val))
        except OSError as e:
            raise BenchError("cannot write %s to %s: %s" % (val, path, e.strerror)) from None

    def detach(self):
        # the kernel keeps the bdi's limits and the write cache mode for
        # the device's next user (another program's)
        for rel, val in reversed(self._bdi_saved or []):
            try:
                self._write_sys("bdi/" + rel, val)
            except BenchError as e:
                warn("%s: cannot restore the dirty limit: %s" % (self.dev, e))
        self._bdi_saved = None
        if self.write_cache() == "write through":
            try:
                self.set_write_cache("write back")
            except BenchError as e:
                warn("%s: cannot restore write back: %s" % (self.dev, e))
        for i in range(50):
            p = run(["losetup", "-d", self.dev], check=False)
            if p.returncode == 0 or not self.attached():
                return
            time.sleep(0.1)
        raise BenchError("losetup -d %s failed: %s" % (self.dev, p.stderr.strip()))

    def attached(self):
        p = run(["losetup", "-j", self.backing], check=False)
        return self.dev + ":" in p.stdout


# --------------------------------------------------------------------------
# mounts

def is_mountpoint(path):
    path = os.path.realpath(path)
    with open("/proc/self/mounts") as f:
        for line in f:
            mp = line.split()[1].replace("\\040", " ")
            if mp == path:
                return True
    return False


def ext_superblock(dev):
    """What the superblock of the ext3/ext4 filesystem on dev says
    (dumpe2fs -h): {"journal_mib": the journal's size in MiB, or None
    when it has none or does not say; "hash_seed": the directory hash
    seed, or None}."""
    p = run(["dumpe2fs", "-h", dev], check=False)
    facts = {"journal_mib": None, "hash_seed": None}
    m = re.search(r"^Total journal size:\s+(\d+)([kMG])", p.stdout, re.M)
    if m:
        n = int(m.group(1))
        facts["journal_mib"] = {"k": n / 1024, "M": n, "G": n * 1024}[m.group(2)]
    m = re.search(r"^Directory Hash Seed:\s+(\S+)", p.stdout, re.M)
    if m:
        facts["hash_seed"] = m.group(1)
    return facts


def mount_options_of(path):
    """The options the kernel reports for the mount at path (what it
    actually applied, defaults included), or "" when it is not mounted."""
    path = os.path.realpath(path)
    with open("/proc/self/mounts") as f:
        for line in f:
            w = line.split()
            if w[1].replace("\\040", " ") == path:
                return w[3]
    return ""


def umount(path, cgroup=None):
    """umount path; if busy, kill the workload's cgroup and retry; as a last
    resort a lazy umount, logged."""
    if not is_mountpoint(path):
        return
    last = ""
    for i in range(30):
        p = run(["umount", path], check=False)
        if p.returncode == 0 or not is_mountpoint(path):
            return
        last = p.stderr.strip()
        if cgroup is not None:
            cgroup.kill_all()
        time.sleep(0.2)
    warn("umount %s kept failing (%s): lazy umount" % (path, last))
    run(["umount", "-l", path])


def kernel_release():
    return os.uname().release


def kernel_version_tuple():
    m = re.match(r"(\d+)\.(\d+)", kernel_release())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def dmesg_tail(n=2):
    p = run(["dmesg"], check=False)
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    return " / ".join(lines[-n:])
