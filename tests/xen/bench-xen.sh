#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-xen.sh: "make bench-xen".  ONE boot of real Xen 4.17 nested in
# qemu-system-x86_64 (TCG) and the same workloads against
#   blkbackd  blkbackd --transport=xen (script=block-blkbackd)
#   blkback   kernel xen-blkback (phy:)
#   qdisk     QEMU qdisk (backendtype=qdisk)
# each on the same kind of backing, in two tables (BX_TABLES):
#   block     a RAM disk (brd) each: /dev/ram0, /dev/ram1, /dev/ram2
#   file      a file each on dom0's tmpfs (blkback: through /dev/loop0)
# one guest per table; in each round every backend runs every workload,
# the backends' order rotating from round to round (ABC, BCA, CAB, ...):
# dd, fio, fdatasync loop, bonnie++ (dom0-init.sh, phase bench;
# domU-init.sh, rpc), with dom0's CPU time per workload and a watch on
# dom0's daemons.  Prints the tables of medians and writes
# XDIR/bench-xen.txt and XDIR/bench-xen.json (every round's numbers,
# medians, the blkbackd binary's build id and git revision, the tree's
# revision, date, the boot's parameters); the console is
# XDIR/bench-xen-console.txt (not *.log: check-xen clears those).
# The numbers are never pass/fail thresholds; the bench fails when the
# boot fails, a workload did not run or gave no number, or a dom0 daemon
# died (or dom0's kernel logged a crash).
#
# Environment (set by tests/xen.mk): srcdir, XDIR, top_srcdir, top_builddir,
# CC; ROUNDS (default 5); BX_TABLES (default "block file", in that order);
# BX_MIB (the region dd and fio use, default 64); BX_FIO (seconds each fio
# job measures, default 10) and BX_RAMP (its ramp, default 2); BX_BLKFRONT
# (the guest's xen-blkfront parameters, P=V,P=V, e.g.
# feature_persistent=0; default none); BX_WL (the workloads, in order, a
# subset of the default "ddw ddr rr1 rr32 rw1 rw32 fsync bonnie");
# BX_STRACE (default "rr1 rr32"; "-" for none): workloads run once more on
# blkbackd after the block table's rounds, untimed, under strace -f -c,
# for its system calls per request;
# BX_TRACE (default 0): N > 0 adds, after the block table's rounds, N
# pairs of passes of rr1 (fio randread 4 KiB QD1), one on blkbackd and
# one on kernel xen-blkback, each traced by dom0's ftrace for
# BX_TRACE_SECS (default 2) seconds of fio's steady state; the raw
# traces go to XDIR/lat/ and tests/xen/bench-xen-lat.py's per-request
# breakdown to XDIR/bench-xen-lat.txt (needs BX_FIO >= BX_TRACE_SECS + 3);
# TIMEOUT (QEMU; default twice the expected duration printed at the start,
# plus 600 s).
# Each disk is 256 MiB (three RAM disks or three tmpfs files, written in
# full before the first round), so dom0 gets 1536 MiB instead of
# check-xen's 1024 (boot.sh DOM0_MEM).
# Exit: 0 done, 1 failed (or this machine cannot run it: reason printed).
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")" && pwd)}
top_srcdir=${top_srcdir:-$srcdir/../..}
top_builddir=${top_builddir:-$top_srcdir}
XDIR=${XDIR:-$top_builddir/tests/xen}
export B=${B:-$XDIR/build}	# (boot.sh reads it)
ROUNDS=${ROUNDS:-5}
BX_TABLES=${BX_TABLES:-block file}
BX_STRACE=${BX_STRACE:-rr1 rr32}
[ "$BX_STRACE" != - ] || BX_STRACE=
BX_MIB=${BX_MIB:-64}
BX_FIO=${BX_FIO:-10}
BX_RAMP=${BX_RAMP:-2}
BX_BLKFRONT=${BX_BLKFRONT:-}
BX_WL=${BX_WL:-ddw ddr rr1 rr32 rw1 rw32 fsync bonnie}
BX_TRACE=${BX_TRACE:-0}
BX_TRACE_SECS=${BX_TRACE_SECS:-2}
for w in $BX_WL $BX_STRACE; do
	case $w in ddw | ddr | rr1 | rr32 | rw1 | rw32 | fsync | bonnie) ;;
	*) echo "bench-xen: BX_WL/BX_STRACE: unknown workload $w (ddw ddr rr1 rr32 rw1 rw32 fsync bonnie)" >&2; exit 1 ;;
	esac
done
die() { echo "bench-xen: $*" >&2; exit 1; }
case $ROUNDS in '' | *[!0-9]* | 0) die "ROUNDS=$ROUNDS: want a number >= 1" ;; esac
ntables=0
for t in $BX_TABLES; do
	case $t in block | file) ntables=$((ntables + 1)) ;;
	*) die "BX_TABLES: unknown table $t (block file)" ;;
	esac
done
[ $ntables -gt 0 ] || die "BX_TABLES is empty"
case $BX_TRACE in '' | *[!0-9]*) die "BX_TRACE=$BX_TRACE: want a number (pairs of traced passes)" ;; esac
case $BX_TRACE_SECS in '' | *[!0-9]* | 0) die "BX_TRACE_SECS=$BX_TRACE_SECS: want a number >= 1" ;; esac
if [ "$BX_TRACE" -gt 0 ]; then
	case " $BX_TABLES " in *" block "*) ;; *) die "BX_TRACE needs the block table (BX_TABLES)" ;; esac
	[ "$BX_FIO" -ge $((BX_TRACE_SECS + 3)) ] || die "BX_TRACE: BX_FIO=$BX_FIO must be >= BX_TRACE_SECS + 3 = $((BX_TRACE_SECS + 3))"
fi
# The expected duration, from the runs in BENCHMARKS.md (2 idle cores):
# per backend and round 8 s of hot-plugging, ~3 s per dd, fio's ramp and
# runtime plus ~3 s, ~45 s for bonnie++; per table ~60 s for the guest and
# its backings; ~90 s to build and boot.
per_turn=8
for w in $BX_WL; do
	case $w in
	ddw | ddr) per_turn=$((per_turn + 3)) ;;
	bonnie) per_turn=$((per_turn + 45)) ;;
	*) per_turn=$((per_turn + ${BX_FIO:-10} + ${BX_RAMP:-2} + 3)) ;;
	esac
done
expect=$((90 + ntables * (60 + ROUNDS * 3 * per_turn)))
case " $BX_TABLES " in *" block "*) [ -z "$BX_STRACE" ] || expect=$((expect + 10 + $(echo $BX_STRACE | wc -w) * 60)) ;; esac
# (a traced pass: hot-plugging, fio, ~40 s for its trace on the console)
expect=$((expect + BX_TRACE * 2 * (50 + BX_FIO + BX_RAMP)))
export TIMEOUT=${TIMEOUT:-$((600 + 2 * expect))}
export DOM0_MEM=${DOM0_MEM:-1536M}	# (boot.sh reads it)

# ---- can this machine do it?  (unlike check-xen, no skip: asked for) ----
[ "$(id -u)" = 0 ] || die "needs root (builds initramfs with device nodes, runs xl in the guest)"
missing=
for f in /boot/xen-4.17-amd64.gz /usr/lib/xen-4.17/bin/xl /usr/lib/xen-4.17/bin/xenstored /bin/busybox \
	/usr/libexec/xen-qemu-system-i386 /usr/sbin/bonnie++ /sbin/mke2fs /usr/bin/fio; do
	[ -e "$f" ] || missing="$missing $f"
done
for c in qemu-system-x86_64 cpio perl modprobe timeout python3 gzip readelf; do
	command -v $c >/dev/null || missing="$missing $c"
done
ls /boot/vmlinuz-* >/dev/null 2>&1 || missing="$missing /boot/vmlinuz-*"
[ -z "$missing" ] || die "missing:$missing (run tests/xen/install-deps)"
[ -x "$top_builddir/backend/blkbackd" ] || die "$top_builddir/backend/blkbackd is not built"

mkdir -p "$XDIR" "$B"
SERIAL=$XDIR/bench-xen-console.txt
rm -f "$XDIR/bench-xen.txt" "$XDIR/bench-xen.json" "$SERIAL"

# ---- build (check-xen's images, plus fio for the bench guest) ----
t_start=$(date +%s)
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
{
	${CC:-cc} -O2 -Wall -Wextra -o "$B/xt-holes" "$srcdir/xt-holes.c" &&
	B=$B SRCDIR=$srcdir TOP_SRCDIR=$top_srcdir TOP_BUILDDIR=$top_builddir FIO=1 \
		bash "$srcdir/build-initramfs.sh"
} > "$B/build-bench.log" 2>&1 || { tail -n 20 "$B/build-bench.log" >&2; die "build failed ($B/build-bench.log)"; }

# ---- one boot ----
# which blkbackd goes into dom0: its ELF build id (and the git revision
# its --version prints, which dom0 records as "@@V": the binary that ran)
bb_bin=$B/root0/usr/sbin/blkbackd
bb_buildid=$(readelf -n "$bb_bin" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -1)
bb_sha=$(sha256sum < "$bb_bin" 2>/dev/null | cut -c1-16)
echo "bench-xen: blkbackd in dom0: $(sed -n 's/^build-initramfs: blkbackd from //p' "$B/build-bench.log"); build id ${bb_buildid:-none}"
echo "bench-xen: tables \"$BX_TABLES\", $ROUNDS rounds, workloads \"$BX_WL\": expect ~$((expect / 60)) min" \
	"($(date -u -d "@$(($(date +%s) + expect))" +%H:%M) UTC) on 2 idle cores, longer on a busy machine"
echo "bench-xen: booting Xen under QEMU/TCG (timeout $TIMEOUT s), console in $SERIAL"
t0=$(date +%s)
DOM0_CPIO=$B/dom0-bench.cpio bash "$srcdir/boot.sh" "$SERIAL" \
	xt.phases=bench xt.rounds="$ROUNDS" xt.bx_tables="$(echo $BX_TABLES | tr ' ' ,)" xt.bx_strace="$(echo ${BX_STRACE:--} | tr ' ' ,)" xt.bx_mib="$BX_MIB" xt.bx_fio="$BX_FIO" xt.bx_ramp="$BX_RAMP" \
	xt.bx_trace="$BX_TRACE" xt.bx_trace_secs="$BX_TRACE_SECS" \
	${BX_BLKFRONT:+xt.bx_blkfront=$BX_BLKFRONT} xt.bx_wl="$(echo $BX_WL | tr ' ' ,)"
rc=$?
boot_secs=$(($(date +%s) - t0))
boot_ok=1
if [ $rc != 0 ] || ! grep -q '@@M .* ALL-DONE' "$SERIAL"; then
	boot_ok=0
	echo "bench-xen: the boot did not finish (qemu exit $rc after $boot_secs s); its last lines:" >&2
	tail -n 40 "$SERIAL" >&2
fi

# ---- the report ----
rev=$(git -C "$top_srcdir" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$top_srcdir" status --porcelain --untracked-files=no 2>/dev/null | head -1)
configure=$(cd "$top_builddir" && ./config.status --config 2>/dev/null)
python3 "$srcdir/bench-xen-report.py" "$SERIAL" "$XDIR/bench-xen.txt" "$XDIR/bench-xen.json" \
	--meta "git_revision=$rev" \
	--meta "git_dirty=$([ -n "$dirty" ] && echo yes || echo no)" \
	--meta "date=$date_start" \
	--meta "duration_s=$(($(date +%s) - t_start))" \
	--meta "boot_s=$boot_secs" \
	--meta "boot_finished=$boot_ok" \
	--meta "qemu_exit=$rc" \
	--meta "blkbackd_build_id=${bb_buildid:-none}" \
	--meta "blkbackd_sha256_16=${bb_sha:-none}" \
	--meta "blkbackd_from=$(sed -n 's/^build-initramfs: blkbackd from //p' "$B/build-bench.log")" \
	--meta "tables=$BX_TABLES" \
	--meta "strace_workloads=$BX_STRACE" \
	--meta "dom0_mem=$DOM0_MEM" \
	--meta "expected_s=$expect" \
	--meta "command=make bench-xen ROUNDS=$ROUNDS BX_TABLES=\"$BX_TABLES\" BX_MIB=$BX_MIB BX_FIO=$BX_FIO BX_RAMP=$BX_RAMP${BX_BLKFRONT:+ BX_BLKFRONT=$BX_BLKFRONT} BX_WL=\"$BX_WL\"$([ "$BX_TRACE" = 0 ] || echo " BX_TRACE=$BX_TRACE BX_TRACE_SECS=$BX_TRACE_SECS")" \
	--meta "workloads=$BX_WL" \
	--meta "guest_blkfront=${BX_BLKFRONT:-(defaults)}" \
	--meta "rounds=$ROUNDS" --meta "bx_mib=$BX_MIB" --meta "fio_runtime_s=$BX_FIO" --meta "fio_ramp_s=$BX_RAMP" \
	--meta "configure=${configure:-(no options)}" \
	--meta "guest_kernel=$(sed -n 's/^build-initramfs: kernel //p' "$B/build-bench.log")" \
	--meta "host=$(uname -srm), $(nproc) CPUs" \
	--meta "host_load_start=$load_start" \
	--meta "host_load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
rc=$?
# the traced passes (BX_TRACE): the raw traces and their breakdown
if [ "$BX_TRACE" -gt 0 ]; then
	rm -rf "$XDIR/lat"
	if python3 "$srcdir/bench-xen-lat.py" --extract "$XDIR/lat" "$SERIAL" > "$XDIR/bench-xen-lat.txt"; then
		cat "$XDIR/bench-xen-lat.txt"
	else
		echo "bench-xen: the trace breakdown failed" >&2
		rc=1
	fi
fi
[ $boot_ok = 1 ] || rc=1
[ $rc = 0 ] && echo "bench-xen: done in $(($(date +%s) - t_start)) s" || echo "bench-xen: FAILED (see above; console $SERIAL)"
exit $rc
