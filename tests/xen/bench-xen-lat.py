#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench-xen-lat.py: where the time goes per request, blkbackd vs kernel
xen-blkback, from the ftrace'd QD1 passes of make bench-xen BX_TRACE=N.

  bench-xen-lat.py [--extract DIR] [--skip ID]... CONSOLE   bench-xen's console
  bench-xen-lat.py [--skip ID]... DIR                        an extracted DIR
(--skip ID: leave a pass out, e.g. one a dom0 hiccup disturbed; said
in the output)

The console (tests/xen/bench-xen-console.txt) carries, per traced pass
ID = block:lat:LABEL:N (dom0-init.sh bx_lat):
  @@FM ID KEY=VALUE... / @@FM ID task TID COMM / @@FM ID irq N: NAME
                                 what was traced (clock, backend's tasks,
                                 its event channels' interrupts, device)
  @@FT ID BASE64                 the trace, gzip'd, "PID CPU USECS EVENT: ..."
  @@FE ID MD5 LINES              its checksum (a console that dropped a
                                 character is refused, not trusted)
  @@R ID KEY=VALUE...            the guest's fio numbers for that pass
--extract DIR writes DIR/ID.trace.gz (ID with ':' as '-') and DIR/meta.txt
(the @@FM/@@FE/@@R lines and blkbackd's "I/O engine" log line), which
DIR mode reads back: the committed raw data reproduces the table.

A request, at QD1, is one cycle of the backend:
  irq     the guest's notify arrives: the backend's event-channel
          interrupt handler runs in dom0 (irq_handler_entry)
  wake    the handler wakes the backend's task (sched_waking)
  run     that task is switched in (sched_switch)
  submit  the bio reaches the RAM disk (block_bio_queue)
  done    brd ends it (bio_endio; brd is synchronous)
  notify  the backend notifies the guest (xen-blkback:
          notify_remote_via_irq; blkbackd: ioctl(IOCTL_EVTCHN_NOTIFY)
          entering the kernel)
Each cycle is the first backend interrupt after the previous notify up
to the next notify; a cycle without an interrupt (the backend found the
request without one) or without a bio is counted, not timed.  The time
from one notify to the next interrupt is the round trip outside dom0's
backend (Xen, the guest's blkfront, fio).  Times are medians and p90
over every cycle of every pass of a backend, in microseconds.
"""
import base64
import gzip
import hashlib
import os
import re
import sys

EVTCHN_IOCTL = {0: "BIND_VIRQ", 1: "BIND_INTERDOMAIN", 2: "BIND_UNBOUND_PORT", 3: "UNBIND",
                4: "NOTIFY", 5: "RESET", 6: "RESTRICT_DOMID"}
GNTDEV_IOCTL = {0: "MAP_GRANT_REF", 1: "UNMAP_GRANT_REF", 2: "GET_OFFSET_FOR_VADDR",
                3: "SET_MAX_GRANTS", 7: "SET_UNMAP_NOTIFY", 8: "GRANT_COPY"}
# the functions the dom0 trace may hold, and the hypercall each ends in
FUNC_HYPERCALL = {
    "notify_remote_via_irq": "event_channel_op(SEND)",
    "notify_remote_via_evtchn": "event_channel_op(SEND)",
    "gnttab_map_refs": "grant_table_op(MAP_GRANT_REF)",
    "gnttab_unmap_refs": "grant_table_op(UNMAP_GRANT_REF)",
    "gnttab_batch_copy": "grant_table_op(COPY)",
    "gnttab_batch_map": "grant_table_op(MAP_GRANT_REF)",
    "privcmd_ioctl": "(privcmd: any)",
}


HYPERCALLS = {0: "set_trap_table", 1: "mmu_update", 2: "set_gdt", 3: "stack_switch",
              4: "set_callbacks", 5: "fpu_taskswitch", 6: "sched_op_compat", 7: "platform_op",
              8: "set_debugreg", 9: "get_debugreg", 10: "update_descriptor", 12: "memory_op",
              13: "multicall", 14: "update_va_mapping", 15: "set_timer_op",
              16: "event_channel_op_compat", 17: "xen_version", 18: "console_io",
              19: "physdev_op_compat", 20: "grant_table_op", 21: "vm_assist",
              22: "update_va_mapping_otherdomain", 23: "iret", 24: "vcpu_op",
              25: "set_segment_base", 26: "mmuext_op", 27: "xsm_op", 28: "nmi_op",
              29: "sched_op", 30: "callback_op", 31: "xenoprof_op", 32: "event_channel_op",
              33: "physdev_op", 34: "hvm_op", 35: "sysctl", 36: "domctl", 37: "kexec_op",
              40: "xenpmu_op", 41: "dm_op", 42: "hypfs_op"}
# the first argument Xen records for these (xen/common/trace.c
# __trace_hypercall: the command)
HYPERCALL_CMDS = {
    20: {0: "map_grant_ref", 1: "unmap_grant_ref", 2: "setup_table", 3: "dump_table",
         4: "transfer", 5: "copy", 6: "query_size", 7: "unmap_and_replace",
         8: "set_version", 9: "get_status_frames", 10: "get_version", 11: "swap_grant_ref",
         12: "cache_flush"},
    29: {0: "yield", 1: "block", 2: "shutdown", 3: "poll", 4: "remote_shutdown",
         5: "shutdown_code", 6: "watchdog", 7: "pin_override"},
    24: {0: "initialise", 1: "up", 2: "down", 3: "is_up", 4: "get_runstate_info",
         5: "register_runstate_memory_area", 6: "set_periodic_timer",
         7: "stop_periodic_timer", 8: "set_singleshot_timer", 9: "stop_singleshot_timer",
         10: "register_vcpu_info", 11: "send_nmi", 12: "get_physid",
         13: "register_vcpu_time_memory_area"},
}
TRC_TRACE_CPU_CHANGE = 0x0001f003
TRC_LOST_RECORDS = 0x0001f001
TRC_SCHED_SWITCH = 0x0002800a
TRC_PV_HYPERCALL_V2 = 0x0020100d
TRC_PV_HYPERCALL_SUBCALL = 0x0020200e
IDLE_DOMAIN = 0x7fff


def xentrace_counts(raw):
    """Xen's binary trace (xentrace's file: per physical CPU a
    TRC_TRACE_CPU_CHANGE record, then that CPU's records) -> (counts
    {(domain, "hypercall" or "hypercall(cmd)", "" or "in multicall"): n},
    TSC span, lost records)."""
    import struct
    counts, cur, lost = {}, {}, 0
    cpu, off, tmin, tmax = 0, 0, None, None
    while off + 4 <= len(raw):
        (h,) = struct.unpack_from("<I", raw, off)
        off += 4
        ev, n, cyc = h & 0x0fffffff, (h >> 28) & 7, h >> 31
        tsc = None
        if cyc:
            tsc = struct.unpack_from("<Q", raw, off)[0]
            off += 8
        extra = struct.unpack_from("<%dI" % n, raw, off) if n else ()
        off += 4 * n
        if tsc is not None:
            tmin = tsc if tmin is None else min(tmin, tsc)
            tmax = tsc if tmax is None else max(tmax, tsc)
        if ev == TRC_TRACE_CPU_CHANGE and extra:
            cpu = extra[0]
        elif ev == TRC_LOST_RECORDS:
            lost += 1
        elif ev == TRC_SCHED_SWITCH and len(extra) >= 3:
            cur[cpu] = extra[2]
        elif ev in (TRC_PV_HYPERCALL_V2, TRC_PV_HYPERCALL_SUBCALL) and extra:
            op = extra[0] & 0xfffff
            name = HYPERCALLS.get(op, "hypercall%d" % op)
            if op in HYPERCALL_CMDS and len(extra) > 1 and (extra[0] >> 20) & 3:
                name += "(%s)" % HYPERCALL_CMDS[op].get(extra[1], extra[1])
            k = (cur.get(cpu), name, "in multicall" if ev == TRC_PV_HYPERCALL_SUBCALL else "")
            counts[k] = counts.get(k, 0) + 1
    span = (tmax - tmin) if tmin is not None else 0
    return counts, span, lost


def syscall_names():
    names = {}
    for f in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
        try:
            for line in open(f):
                m = re.match(r"#define __NR_(\w+) (\d+)", line)
                if m:
                    names[int(m.group(2))] = m.group(1)
            break
        except OSError:
            continue
    return names


SYSCALLS = syscall_names()


def sysname(nr, args):
    n = SYSCALLS.get(nr, "sys%d" % nr)
    if n == "ioctl" and len(args) > 1:
        try:
            cmd = int(args[1], 16)
        except ValueError:
            return n
        t, k = chr((cmd >> 8) & 0xff), cmd & 0xff
        if t == "E":
            return "ioctl(EVTCHN_%s)" % EVTCHN_IOCTL.get(k, k)
        if t == "G":
            return "ioctl(GNTDEV_%s)" % GNTDEV_IOCTL.get(k, k)
        return "ioctl(%#x)" % cmd
    return n


def quantile(v, q):
    if not v:
        return None
    v = sorted(v)
    i = q * (len(v) - 1)
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


# ---------------- reading ----------------

def read_console(path):
    meta, b64, check, other = {}, {}, {}, []
    xb64, xcheck = {}, {}
    for line in open(path, errors="replace"):
        i = line.find("@@F")
        j = line.find("@@R ")
        if "[blkbackd]" in line and re.search(r"engine|io_submit|io_uring", line):
            other.append(line[line.index("[blkbackd]"):].rstrip("\n"))
        m = re.search(r"\(XEN\) .*Detected ([0-9.]+) MHz processor", line)
        if m:
            other.append("@@XHZ %s" % m.group(1))
        k = line.find("@@X")
        if k >= 0:
            w = line[k:].rstrip("\n").split(" ", 2)
            if len(w) == 3 and w[0] == "@@XT":
                xb64.setdefault(w[1], []).append(w[2].strip())
            elif len(w) == 3 and w[0] == "@@XE":
                xcheck[w[1]] = w[2].split()
        if j >= 0 and ":lat:" in line:
            other.append(line[j:].rstrip("\n"))
        if i < 0:
            continue
        w = line[i:].rstrip("\n").split(" ", 2)
        if len(w) < 3:
            continue
        if w[0] == "@@FT":
            b64.setdefault(w[1], []).append(w[2].strip())
        elif w[0] == "@@FM":
            meta.setdefault(w[1], []).append(w[2])
        elif w[0] == "@@FE":
            check[w[1]] = w[2].split()
    traces = {}
    for tid, chunks in b64.items():
        raw = base64.b64decode("".join(chunks))
        want = check.get(tid)
        if not want or hashlib.md5(raw).hexdigest() != want[0]:
            sys.exit("bench-xen-lat: %s: the trace's checksum does not match (console lost bytes?)" % tid)
        traces[tid] = raw
    for tid, chunks in xb64.items():
        raw = base64.b64decode("".join(chunks))
        want = xcheck.get(tid)
        if not want or hashlib.md5(raw).hexdigest() != want[0]:
            sys.exit("bench-xen-lat: %s: xentrace's checksum does not match (console lost bytes?)" % tid)
        traces["xen " + tid] = raw
    lines = []
    for tid in xcheck:
        lines.append("@@XE %s %s" % (tid, " ".join(xcheck[tid])))
    for tid in meta:
        lines += ["@@FM %s %s" % (tid, m) for m in meta[tid]]
    for tid in check:
        lines.append("@@FE %s %s" % (tid, " ".join(check[tid])))
    return traces, lines + other


def read_dir(d):
    traces = {}
    lines = open(os.path.join(d, "meta.txt")).read().splitlines()
    for line in lines:
        if line.startswith("@@FE "):
            tid, md5 = line.split()[1:3]
            raw = open(os.path.join(d, tid.replace(":", "-") + ".trace.gz"), "rb").read()
            if hashlib.md5(raw).hexdigest() != md5:
                sys.exit("bench-xen-lat: %s: checksum mismatch" % tid)
            traces[tid] = raw
        elif line.startswith("@@XE "):
            tid, md5 = line.split()[1:3]
            raw = open(os.path.join(d, tid.replace(":", "-") + ".xentrace.gz"), "rb").read()
            if hashlib.md5(raw).hexdigest() != md5:
                sys.exit("bench-xen-lat: %s: xentrace checksum mismatch" % tid)
            traces["xen " + tid] = raw
    return traces, lines


# ---------------- one pass ----------------

# "PID CPU USECS EVENT: FIELDS" (an event) or "PID CPU USECS FUNC <-CALLER"
# (the function tracer)
EV = re.compile(r"^(\d+) (\d+) (\d+) ([\w.]+)(?::|(?= <-))? ?(.*)$")


def kv(s):
    return dict(re.findall(r"(\w+)=(\S+)", s))


class Pass:
    def __init__(self, tid, raw, metalines):
        self.id = tid
        self.label = tid.split(":")[2]
        self.meta, self.tasks, self.irqs = {}, {}, {}
        for m in metalines:
            w = m.split()
            if w[0] == "task" and len(w) >= 3:
                self.tasks[int(w[1])] = w[2]
            elif w[0] == "irq" and len(w) >= 3:
                self.irqs[int(w[1].rstrip(":"))] = w[2]
            elif w[0] == "fds":
                self.meta["fds"] = " ".join(w[1:])
            else:
                self.meta.update(kv(m))
        dev = self.meta.get("dev", "")
        try:
            ma, mi = dev.split(":")
            self.dev = "%d,%d" % (int(ma, 16), int(mi, 16))
        except ValueError:
            self.dev = None
        self.events = []
        for line in gzip.decompress(raw).decode(errors="replace").splitlines():
            m = EV.match(line)
            if m:
                self.events.append((int(m.group(3)), int(m.group(2)), int(m.group(1)), m.group(4), m.group(5)))
        self.analyse()

    def is_backend_irq(self, name):
        if self.label == "blkback":
            return name == "blkif-backend"
        return name == "evtchn:blkbackd"

    def analyse(self):
        ev = self.events
        self.t0 = ev[0][0] if ev else 0
        self.t1 = ev[-1][0] if ev else 0
        backend = set(self.tasks)
        comm = dict(self.tasks)
        cur = {}             # cpu -> pid running there
        # the backend's tasks' states: pid -> [since, running, runnable,
        # syscall or None, in an interrupt handler]
        st = {}
        acct = {}            # pid -> {(state, syscall): us}
        sys_in = {}          # pid -> (name, ts)
        sys_count, sys_time = {}, {}
        hyper, funcs, xenev, faults = {}, {}, {}, {}
        irq_open = {}        # cpu -> ts
        irq_time = 0
        cpu_time = {}        # pid -> us on CPU (interrupt handlers included)
        cpu_since = {}       # cpu -> ts of its last switch
        switches = wakeups = 0
        nback_irq = 0
        cycles, polled, outside = [], 0, []
        cyc = None           # the open cycle: its marks, "cp" its path's time
        last_notify = None

        def state_of(s):
            if s[4]:
                return "interrupt"
            return "running" if s[1] else ("runnable" if s[2] else "sleeping")

        def mark(pid, ts):
            s = st.get(pid)
            if s is None:
                return
            k = (state_of(s), s[3])
            a = acct.setdefault(pid, {})
            a[k] = a.get(k, 0) + ts - s[0]
            # the request's path: the task woken for it, from its wake-up
            # to the notify, by phase
            if cyc is not None and cyc.get("wpid") == pid:
                ph = "1 to submit" if "submit" not in cyc else ("2 in brd" if "done" not in cyc else "3 to notify")
                c = cyc.setdefault("cp", {})
                c[(ph,) + k] = c.get((ph,) + k, 0) + ts - s[0]
            s[0] = ts

        def setst(pid, ts, running=None, runnable=None, sc=0, irq=None):
            if pid not in backend:
                return
            s = st.setdefault(pid, [ts, False, False, None, False])
            mark(pid, ts)
            if running is not None:
                s[1] = running
            if runnable is not None:
                s[2] = runnable
            if sc != 0:
                s[3] = sc
            if irq is not None:
                s[4] = irq

        def close(ts, pid):
            nonlocal cyc, last_notify, polled
            mark(pid, ts)
            if cyc is None or "irq" not in cyc:
                polled += 1
            else:
                cyc["notify"] = ts
                cycles.append(cyc)
            cyc, last_notify = None, ts

        for ts, cpu, pid, name, rest in ev:
            if name == "sched_switch":
                switches += 1
                m = re.search(r"prev_comm=(.*) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)", rest)
                if not m:
                    continue
                pp, np_ = int(m.group(2)), int(m.group(5))
                comm.setdefault(pp, m.group(1))
                comm.setdefault(np_, m.group(4))
                if cpu in cpu_since and cur.get(cpu) is not None:
                    p = cur[cpu]
                    cpu_time[p] = cpu_time.get(p, 0) + ts - cpu_since[cpu]
                cpu_since[cpu] = ts
                cur[cpu] = np_
                # a prev_state of R (R+): preempted, still runnable
                setst(pp, ts, running=False, runnable=m.group(3).startswith("R"), irq=False)
                setst(np_, ts, running=True, runnable=False)
                if cyc is not None and "wake" in cyc and "run" not in cyc and np_ == cyc["wpid"]:
                    cyc["run"] = ts
            elif name in ("sched_waking", "sched_wakeup"):
                m = re.search(r"comm=(.*) pid=(\d+)", rest)
                if not m or name != "sched_waking":
                    continue
                p = int(m.group(2))
                wakeups += 1
                if p in backend and not st.get(p, [0, False])[1]:
                    setst(p, ts, runnable=True)
                    if cyc is not None and "wake" not in cyc and "submit" not in cyc:
                        cyc["wake"], cyc["wpid"] = ts, p
                        t = re.search(r"target_cpu=(\d+)", rest)
                        cyc["cross"] = bool(t) and int(t.group(1)) != cpu
            elif name == "irq_handler_entry":
                m = re.search(r"irq=(\d+) name=(\S+)", rest)
                irq_open[cpu] = ts
                if cur.get(cpu) in backend:
                    setst(cur[cpu], ts, irq=True)
                if m and self.is_backend_irq(m.group(2)):
                    nback_irq += 1
                    if cyc is None:
                        cyc = {"irq": ts}
                        if last_notify is not None:
                            outside.append(ts - last_notify)
            elif name == "irq_handler_exit":
                if cpu in irq_open:
                    irq_time += ts - irq_open.pop(cpu)
                if cur.get(cpu) in backend:
                    setst(cur[cpu], ts, irq=False)
            elif name == "block_bio_queue":
                if self.dev is None or rest.startswith(self.dev + " "):
                    if cyc is None:
                        cyc = {"noirq": ts}
                    if "submit" not in cyc:
                        if "wpid" in cyc:
                            mark(cyc["wpid"], ts)
                        cyc["submit"] = ts
            elif name == "sys_enter":
                m = re.match(r"NR (\d+) \(([^)]*)\)", rest)
                if not m:
                    continue
                nm = sysname(int(m.group(1)), [a.strip() for a in m.group(2).split(",")])
                sys_in[pid] = (nm, ts)
                sys_count[nm] = sys_count.get(nm, 0) + 1
                if nm == "ioctl(EVTCHN_NOTIFY)" and self.label == "blkbackd":
                    close(ts, pid)
                setst(pid, ts, sc=nm)
            elif name == "sys_exit":
                if pid in sys_in:
                    nm, t = sys_in.pop(pid)
                    sys_time.setdefault(nm, []).append(ts - t)
                setst(pid, ts, sc=None)
            elif name == "xen_mc_entry":
                m = re.match(r"op (\d+)(\((\w+)\))?", rest)
                if m:
                    k = m.group(3) or m.group(1)
                    hyper[k] = hyper.get(k, 0) + 1
            elif name == "xen_mc_flush":
                if not rest.startswith("flushing 0 "):
                    hyper["(multicall batches)"] = hyper.get("(multicall batches)", 0) + 1
            elif name.startswith("xen_"):
                k = (self.group(pid, comm), name)
                xenev[k] = xenev.get(k, 0) + 1
            elif name in ("page_fault_user", "page_fault_kernel"):
                k = (self.group(pid, comm), name)
                faults[k] = faults.get(k, 0) + 1
            else:
                # function tracer lines: "EVENT" is the function's name
                f = name
                funcs[f] = funcs.get(f, 0) + 1
                if f == "bio_endio" and cyc is not None and "submit" in cyc and "done" not in cyc:
                    if "wpid" in cyc:
                        mark(cyc["wpid"], ts)
                    cyc["done"] = ts
                if f == "notify_remote_via_irq" and self.label == "blkback":
                    close(ts, pid)
        for pid in list(st):
            mark(pid, self.t1)
        for p in cur:
            if cur[p] is not None and p in cpu_since:
                cpu_time[cur[p]] = cpu_time.get(cur[p], 0) + self.t1 - cpu_since[p]
        self.cycles, self.polled, self.outside = cycles, polled, outside
        self.acct, self.comm = acct, comm
        self.sys_count, self.sys_time = sys_count, sys_time
        self.hyper, self.funcs, self.xenev, self.faults = hyper, funcs, xenev, faults
        self.irq_time, self.cpu_time = irq_time, cpu_time
        self.switches, self.wakeups, self.nback_irq = switches, wakeups, nback_irq
        self.requests = len(cycles) + polled
        self.window = self.t1 - self.t0

    def group(self, pid, comm):
        c = comm.get(pid, str(pid))
        if pid == 0:
            return "idle"
        if pid in self.tasks:
            return "backend"
        if c.startswith("iou-"):
            return "io_uring workers"
        return "other: " + re.sub(r"[/:]?\d+.*$", "", c)


SEGMENTS = [
    ("irq -> wake", "irq", "wake", "the upcall's handler to the backend task's wake-up"),
    ("wake -> run", "wake", "run", "runnable, not yet running"),
    ("run -> submit", "run", "submit", "the task reads the ring, maps/copies, submits"),
    ("irq -> submit", "irq", "submit", "(the three above)"),
    ("submit -> done", "submit", "done", "brd copies the 4 KiB"),
    ("done -> notify", "done", "notify", "completion to the guest's notify"),
    ("irq -> notify", "irq", "notify", "in dom0, per request"),
]


def seg_values(passes, a, b):
    v = []
    for p in passes:
        for c in p.cycles:
            if a in c and b in c and c[b] >= c[a]:
                v.append(c[b] - c[a])
    return v


def fmt(x, w=7):
    return ("%*.0f" % (w, x)) if x is not None else " " * (w - 1) + "-"


def report(traces, lines, out):
    meta = {}
    guest = {}
    engine = []
    for line in lines:
        w = line.split(" ", 2)
        if w[0] == "@@FM" and len(w) == 3:
            meta.setdefault(w[1], []).append(w[2])
        elif w[0] == "@@R" and len(w) == 3:
            guest[w[1]] = kv(w[2])
        elif line.startswith("[blkbackd]"):
            engine.append(line)
    passes = [Pass(tid, traces[tid], meta.get(tid, [])) for tid in sorted(traces) if not tid.startswith("xen ")]
    tsc_mhz = None
    for line in lines:
        if line.startswith("@@XHZ "):
            tsc_mhz = float(line.split()[1])
    if not passes:
        sys.exit("bench-xen-lat: no traced pass in the input")
    by = {}
    for p in passes:
        by.setdefault(p.label, []).append(p)
    labels = [l for l in ("blkbackd", "blkback") if l in by]
    P = out.write
    m0 = kv(" ".join(m for m in meta.get(passes[0].id, [])))
    P("Per-request breakdown, fio randread 4 KiB QD1 in the guest (rr1t), dom0 ftrace\n")
    P("trace_clock %s (clocksource %s; ns, printed to 1 us), kernel %s\n" %
      (m0.get("trace_clock"), m0.get("clocksource"), m0.get("kernel")))
    P("functions traced: %s\n" % (m0.get("funcs") or "-").replace(",", " "))
    for e in sorted(set(engine)):
        P("%s\n" % e)
    for p in passes:
        g = guest.get(p.id, {})
        try:
            rate = "%.0f" % (float(g.get("read_iops")) * p.window / 1e6)
        except (TypeError, ValueError):
            rate = "-"
        P("pass %-22s %5.2f s traced, %5d requests (fio's IOPS x window: %s; %d timed, %d without an interrupt), overrun %s, dropped %s\n" %
          (p.id, p.window / 1e6, p.requests, rate, len(p.cycles), p.polled, p.meta.get("overrun"), p.meta.get("dropped")))
        if p.label == "blkbackd" and p.requests:
            P("     blkbackd's system calls per request: %s\n" % ", ".join(
                "%s %.2f" % (k, v / p.requests) for k, v in sorted(p.sys_count.items(), key=lambda kv: -kv[1])
                if v / p.requests >= 0.01))
    # the clock across vCPUs: a wake-up on one vCPU and the switch-in it
    # causes on the other are stamped by different vCPUs; a skew between
    # them would show as switch-ins missing after their wake-ups (the
    # stream is merged by time stamp) or as cross-vCPU waits near zero
    for l in labels:
        woke = [c for p in by[l] for c in p.cycles if "wake" in c]
        cross = [c["run"] - c["wake"] for c in woke if c.get("cross") and "run" in c]
        P("clock check, %s: %d wake-ups, %d without their switch-in; woken across vCPUs: %d, "
          "wake -> run min %s us\n" % (l, len(woke), sum(1 for c in woke if "run" not in c),
                                        len(cross), fmt(min(cross) if cross else None, 1).strip()))
    P("\nSegments (us; every timed request of every pass)     %s\n" %
      "".join("%-22s" % ("  " + l) for l in labels))
    P("%-52s%s\n" % ("", "".join("%7s%7s%7s%6s" % ("p50", "p90", "mean", "n") for _ in labels)))

    def cols(v):
        return "%7s%7s%7s%6d" % (fmt(quantile(v, .5)), fmt(quantile(v, .9)),
                                 fmt(sum(v) / len(v) if v else None), len(v))
    for name, a, b, what in SEGMENTS:
        P("%-16s %-35s" % (name, what[:35]) + "".join(cols(seg_values(by[l], a, b)) for l in labels) + "\n")
        if name == "wake -> run":
            for cross, what in ((False, "target vCPU = the handler's"), (True, "target = the other vCPU")):
                P("%-16s %-35s" % ("  wake -> run", what) + "".join(cols(
                    [c["run"] - c["wake"] for p in by[l] for c in p.cycles
                     if "run" in c and "wake" in c and c.get("cross") == cross]) for l in labels) + "\n")
    P("%-16s %-35s" % ("notify -> irq", "outside dom0's backend: Xen, guest") +
      "".join(cols([x for p in by[l] for x in p.outside]) for l in labels) + "\n")
    row = "%-16s %-35s" % ("cycle", "traced window / requests")
    for l in labels:
        w = sum(p.window for p in by[l])
        n = sum(p.requests for p in by[l])
        row += "%7s%7s%7s%6d" % ("", "", fmt(w / n if n else None), n)
    P(row + "\n")

    P("\nThe request's path in dom0: the task woken for it, from its wake-up to the\n"
      "notify (us per request; requests whose task was woken; \"interrupt\": handlers\n"
      "run while it was on the CPU; the notify's own system call is in the next\n"
      "cycle's \"outside\")\n")
    P("%-56s%s\n" % ("", "".join("%8s%8s" % ("mean", "p50") for _ in labels)))
    P("%-56s%s\n" % ("", "".join("%16s" % l for l in labels)))
    keys, vals = set(), {}
    for l in labels:
        cs = [c for p in by[l] for c in p.cycles if "cp" in c and "run" in c]
        vals[l] = (len(cs), {})
        for c in cs:
            keys |= set(c["cp"])
    for l in labels:
        cs = [c for p in by[l] for c in p.cycles if "cp" in c and "run" in c]
        for k in keys:
            vals[l][1][k] = [c["cp"].get(k, 0) for c in cs]
    tot = {l: 0 for l in labels}
    for k in sorted(keys, key=lambda k: (k[0], k[1], k[2] or "")):
        what = k[2] or ("(user space / kernel thread)" if k[1] == "running" else "-")
        row = "  %-13s %-9s %-30s" % (k[0][2:], k[1], what[:30])
        show = False
        for l in labels:
            v = vals[l][1].get(k, [])
            m = sum(v) / len(v) if v else 0
            tot[l] += m
            show |= m >= 1
            row += "%8.0f%8s" % (m, fmt(quantile(v, .5)) if v else "       -")
        if show:
            P(row + "\n")
    P("  %-54s%s\n" % ("sum (wake -> notify)", "".join("%8.0f%8s" % (tot[l], "") for l in labels)))
    P("  %-54s%s\n" % ("requests", "".join("%8d%8s" % (vals[l][0], "") for l in labels)))
    P("\nThe guest's view (fio clat of the same passes, us)\n")
    for l in labels:
        for p in by[l]:
            g = guest.get(p.id, {})
            P("  %-24s iops %-8s clat p50 %-8s p90 %-8s p99 %-8s\n" %
              (p.id, g.get("read_iops", "-"), g.get("read_p50us", "-"), g.get("read_p90us", "-"), g.get("read_p99us", "-")))

    P("\nPer request (totals over the traced windows / requests)\n")
    keys = set()
    for l in labels:
        for p in by[l]:
            keys |= set("sys " + k for k in p.sys_count)
            keys |= set("hyp multicall: " + k for k in p.hyper)
            keys |= set("pv  %s: %s" % k for k in p.xenev)
            keys |= set("flt %s: %s" % k for k in p.faults)
            keys |= set("fn  " + k for k in p.funcs)
    per = {}
    for l in labels:
        n = sum(p.requests for p in by[l]) or 1
        d = {}
        for p in by[l]:
            for k, v in p.sys_count.items():
                d["sys " + k] = d.get("sys " + k, 0) + v
            for k, v in p.hyper.items():
                d["hyp multicall: " + k] = d.get("hyp multicall: " + k, 0) + v
            for (g, k), v in p.xenev.items():
                d["pv  %s: %s" % (g, k)] = d.get("pv  %s: %s" % (g, k), 0) + v
            for (g, k), v in p.faults.items():
                d["flt %s: %s" % (g, k)] = d.get("flt %s: %s" % (g, k), 0) + v
            for k, v in p.funcs.items():
                d["fn  " + k] = d.get("fn  " + k, 0) + v
            d["context switches"] = d.get("context switches", 0) + p.switches
            d["wake-ups"] = d.get("wake-ups", 0) + p.wakeups
            d["backend interrupts"] = d.get("backend interrupts", 0) + p.nback_irq
        per[l] = {k: v / n for k, v in d.items()}
    keys |= {"context switches", "wake-ups", "backend interrupts"}
    P("%-56s%s\n" % ("", "".join("%10s" % l for l in labels)))
    for k in sorted(keys):
        if any(per[l].get(k, 0) >= 0.01 for l in labels):
            P("%-56s%s\n" % (k[:56], "".join("%10.2f" % per[l].get(k, 0) for l in labels)))
    P("(sys: the backend's system calls; hyp multicall: the hypercalls dom0's kernel\n"
      " batched in multicalls (xen_mc_entry), and the batches flushed, one hypercall\n"
      " each; pv: the PV MMU/CPU hooks (xen/* events) by task; flt: page faults by\n"
      " task; fn: traced kernel functions, those ending in a hypercall:\n")
    for f, h in sorted(FUNC_HYPERCALL.items()):
        P("   %s -> %s\n" % (f, h))
    P(" plus ioctl(EVTCHN_NOTIFY) -> event_channel_op(SEND), ioctl(GNTDEV_GRANT_COPY) ->\n"
      " grant_table_op(COPY), mmap/munmap of gntdev -> grant_table_op(MAP/UNMAP))\n")

    P("\nHypercalls per request, from Xen's own trace (xentrace: 1 s of the same fio run,\n"
      " just before the ftrace window; requests = ftrace's rate x that second; TSC\n"
      " %s MHz): dom0 (domain 0) and the guest\n" % tsc_mhz)
    xper = {}
    for l in labels:
        for p in by[l]:
            raw = traces.get("xen " + p.id)
            if raw is None or not tsc_mhz or not p.window or not p.requests:
                continue
            counts, span, lost = xentrace_counts(gzip.decompress(raw))
            if not span:
                continue
            secs = span / (tsc_mhz * 1e6)
            nreq = p.requests / (p.window / 1e6) * secs
            dom = int(p.meta.get("domid", -1))
            P("  %-24s %.2f s of Xen trace, ~%.0f requests, %d lost-record markers\n" % (p.id, secs, nreq, lost))
            for (d, name, sub), n in counts.items():
                who = "dom0" if d == 0 else ("guest" if d == dom else None)
                if who is None:
                    continue
                k = "%-5s %s%s" % (who, name, " (in a multicall)" if sub else "")
                xper.setdefault(l, {}).setdefault(k, []).append(n / nreq)
    if xper:
        keys = sorted(set(k for l in xper for k in xper[l]))
        P("%-52s%s\n" % ("", "".join("%10s" % l for l in labels)))
        for k in keys:
            vals = [xper.get(l, {}).get(k) for l in labels]
            if all(v is None or sum(v) / len(v) < 0.05 for v in vals):
                continue
            P("  %-50s%s\n" % (k[:50], "".join("%10.2f" % (sum(v) / len(v)) if v else "%10s" % "-" for v in vals)))
    else:
        P("  (no xentrace data)\n")

    P("\nSystem calls of blkbackd's threads (us per call, on entering to leaving, sleep included)\n")
    if "blkbackd" in by:
        d = {}
        for p in by["blkbackd"]:
            for k, v in p.sys_time.items():
                d.setdefault(k, []).extend(v)
        P("  %-28s %8s %8s %8s\n" % ("", "calls", "p50", "p90"))
        for k in sorted(d, key=lambda k: -len(d[k])):
            P("  %-28s %8d %8s %8s\n" % (k, len(d[k]), fmt(quantile(d[k], .5)), fmt(quantile(d[k], .9))))

    P("\nThe backend's tasks: time per request (us) by state (in a system call or not)\n")
    for l in labels:
        n = sum(p.requests for p in by[l]) or 1
        tot = {}
        for p in by[l]:
            for pid, a in p.acct.items():
                for (st, sc), v in a.items():
                    k = (p.comm.get(pid, str(pid)).split("/")[0], st,
                         sc or ("(kernel thread)" if l == "blkback" else "(user space)") if st == "running" else sc or "-")
                    tot[k] = tot.get(k, 0) + v
        P("  %s:\n" % l)
        for k in sorted(tot, key=lambda k: -tot[k]):
            if tot[k] / n >= 0.5:
                P("    %-16s %-9s %-28s %8.1f\n" % (k[0][:16], k[1], k[2][:28], tot[k] / n))

    P("\ndom0 CPU per request (us on a vCPU, from sched_switch and the interrupt handlers;\n"
      " 2 vCPUs x the traced window / requests = the total)\n")
    rows, tots = {}, {}
    for l in labels:
        n = sum(p.requests for p in by[l]) or 1
        d = {}
        for p in by[l]:
            for pid, a in p.acct.items():
                for (stt, sc), v in a.items():
                    if stt == "running":
                        k = "backend: " + ("kernel threads" if l == "blkback" else
                                           ("in system calls" if sc else "user space"))
                        d[k] = d.get(k, 0) + v
            # interrupt handlers: every one, on whatever task they interrupted
            d["interrupt handlers (all)"] = d.get("interrupt handlers (all)", 0) + p.irq_time
            irq_in_backend = sum(v for a in p.acct.values() for (stt, _sc), v in a.items() if stt == "interrupt")
            for pid, v in p.cpu_time.items():
                g = p.group(pid, p.comm)
                if g == "backend":
                    v -= irq_in_backend
                    irq_in_backend = 0
                    continue
                d[g] = d.get(g, 0) + v
            # (the handlers' time is in the interrupted task's share too:
            # take it out of "idle", where nearly all of it lands)
        d["idle"] = d.get("idle", 0) - sum(p.irq_time for p in by[l]) + \
            sum(v for p in by[l] for a in p.acct.values() for (stt, _sc), v in a.items() if stt == "interrupt")
        tots[l] = 2 * sum(p.window for p in by[l]) / n
        rows[l] = {k: v / n for k, v in d.items()}
    keys = sorted(set(k for l in labels for k in rows[l]), key=lambda k: (k == "idle", k.startswith("other"), k))
    P("%-44s%s\n" % ("", "".join("%10s" % l for l in labels)))
    for k in keys:
        if any(rows[l].get(k, 0) >= 1 for l in labels):
            P("  %-42s%s\n" % (k[:42], "".join("%10.0f" % rows[l].get(k, 0) for l in labels)))
    P("  %-42s%s\n" % ("total", "".join("%10.0f" % tots[l] for l in labels)))


def main():
    args = sys.argv[1:]
    extract, skip = None, []
    while len(args) >= 2 and args[0] in ("--extract", "--skip"):
        if args[0] == "--extract":
            extract = args[1]
        else:
            skip.append(args[1])
        args = args[2:]
    if len(args) != 1:
        sys.exit(__doc__)
    if os.path.isdir(args[0]):
        traces, lines = read_dir(args[0])
    else:
        traces, lines = read_console(args[0])
    if extract:
        os.makedirs(extract, exist_ok=True)
        for tid, raw in traces.items():
            if tid.startswith("xen "):
                f = tid[4:].replace(":", "-") + ".xentrace.gz"
            else:
                f = tid.replace(":", "-") + ".trace.gz"
            open(os.path.join(extract, f), "wb").write(raw)
        open(os.path.join(extract, "meta.txt"), "w").write("\n".join(lines) + "\n")
    for tid in skip:
        if tid not in traces:
            sys.exit("bench-xen-lat: --skip %s: no such pass" % tid)
        print("left out (--skip): %s" % tid)
        traces.pop(tid)
        traces.pop("xen " + tid, None)
    report(traces, lines, sys.stdout)


if __name__ == "__main__":
    main()
