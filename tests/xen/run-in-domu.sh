#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-in-domu.sh: run a shell script inside a Linux PV domU on real Xen 4.17
# (nested in QEMU/TCG), on a disk served by blkbackd, and return its output.
# This is the interface blkbench's "xen-nested" where-step uses (README).
#
# Usage: run-in-domu.sh [-s DISK_SIZE] [-m GUEST_MIB] [-t SECONDS] [-f FILE]... SCRIPT
#        run-in-domu.sh -J JOBS -o OUTDIR [-t SECONDS] [-f FILE]...
#   SCRIPT      run as "sh /xt-cmd" in the guest (busybox sh), with
#               XT_DISK=/dev/xvda (the blkbackd disk, empty, DISK_SIZE
#               bytes, default 1G; a sparse file on dom0's tmpfs), GNU tools
#               (dd, bonnie++, mke2fs, mkfs.xfs, e2fsck, fstrim, ...) under
#               /gnu, and each FILE copied to /xt/
#   -m          guest memory in MiB (default 256)
#   -t          how long the script may run (default 300 s; with -J, all
#               the jobs together)
#   -J JOBS     many jobs in ONE boot (blkbench --platform xen-nested), in
#               dom0 or each in a new guest: JOBS has one line per job,
#                 ID PLACE SCRIPT WCE BARRIER DISK_MIB MEM_MIB SECONDS
#               (dom0-init.sh, phase jobs, says what each field does);
#               SCRIPT is one of the -f FILEs.  Each job's files land in
#               OUTDIR/ID/ (stdout: its output; rc: its exit status;
#               whatever it wrote to $XT_OUT).  Exit 0 when the boot
#               finished (each job's own status is in its rc file), 2 when not.
# Prints the script's output (stdout and stderr, in order) on stdout and
# exits with the script's exit status; 2 when the guest never ran it (the
# whole console is then in $B/logs/run-in-domu.log, its tail on stderr).
# Needs root and tests/xen/install-deps; builds the initramfs under $B
# (default: a new /tmp/xen-rid.XXXXXX, removed at exit) unless B is given
# and already holds them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
size=1G mem=256 secs=300 files=() jobs= outdir=
while getopts s:m:t:f:J:o: o; do
	case $o in
	J) jobs=$OPTARG ;;
	o) outdir=$OPTARG ;;
	s) size=$OPTARG ;;
	m) mem=$OPTARG ;;
	t) secs=$OPTARG ;;
	f) files+=("$OPTARG") ;;
	*) sed -n '3,35p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -n "$jobs" ]; then
	[ -r "$jobs" ] || { echo "run-in-domu: cannot read $jobs" >&2; exit 2; }
	[ -n "$outdir" ] || { echo "run-in-domu: -J needs -o OUTDIR" >&2; exit 2; }
	script=/dev/null
else
	script=${1:?usage: run-in-domu.sh [-s SIZE] [-m MIB] [-t SECONDS] [-f FILE]... SCRIPT}
	[ -r "$script" ] || { echo "run-in-domu: cannot read $script" >&2; exit 2; }
fi
[ "$(id -u)" = 0 ] || { echo "run-in-domu: needs root" >&2; exit 2; }

if [ -z "${B:-}" ]; then
	B=$(mktemp -d /tmp/xen-rid.XXXXXX)
	trap 'rm -rf "$B"' EXIT
fi
top_srcdir=${top_srcdir:-$here/../..}
top_builddir=${top_builddir:-$top_srcdir}
mkdir -p "$B/logs"
if [ ! -s "$B/dom0.cpio" ]; then
	${CC:-cc} -O2 -o "$B/xt-holes" "$here/xt-holes.c" &&
	B=$B SRCDIR=$here TOP_SRCDIR=$top_srcdir TOP_BUILDDIR=$top_builddir \
		bash "$here/build-initramfs.sh" > "$B/logs/build.log" 2>&1 ||
		{ tail -n 20 "$B/logs/build.log" >&2; exit 2; }
fi
[ -x "$B/root0/usr/sbin/blkbackd" ] || { echo "run-in-domu: blkbackd is not built" >&2; exit 2; }

# the guest's initramfs gains /xt-cmd and /xt/; dom0's gains that initramfs
# (concatenated newc archives: the kernel unpacks them in order, later wins)
ov=$B/overlay
rm -rf "$ov"
mkdir -p "$ov/u/xt" "$ov/0/boot" "$ov/0/xt"
install -m755 "$script" "$ov/u/xt-cmd"
for f in "${files[@]}"; do cp -a "$f" "$ov/u/xt/"; cp -a "$f" "$ov/0/xt/"; done
[ -z "$jobs" ] || cp "$jobs" "$ov/0/xt/jobs"
(cd "$ov/u" && find . | cpio -o -H newc --quiet) | cat "$B/domu.cpio" - > "$ov/0/boot/domu.cpio"
(cd "$ov/0" && find . | cpio -o -H newc --quiet) | cat "$B/dom0.cpio" - > "$B/dom0-cmd.cpio"

log=$B/logs/run-in-domu.log
if [ -n "$jobs" ]; then
	DOM0_CPIO=$B/dom0-cmd.cpio TIMEOUT=$((secs + 180)) B=$B bash "$here/boot.sh" "$log" xt.phases=jobs
	rc=$?
	mkdir -p "$outdir"
	# "@@O ID NAME LINE" -> OUTDIR/ID/NAME; "@@J-END ID rc=N" -> OUTDIR/ID/rc
	awk -v out="$outdir" '
		function put(id, name, text,   f) {
			f = out "/" id "/" name
			if (!(f in seen)) { system("mkdir -p \"" out "/" id "\""); printf "" > f; seen[f] = 1 }
			print text >> f
		}
		(i = index($0, "@@O ")) > 0 && $0 !~ /@@O [^ ]+ rc( |$)/ {
			s = substr($0, i + 4); id = s; sub(/ .*/, "", id); s = substr(s, length(id) + 2)
			name = s; sub(/ .*/, "", name); put(id, name, substr(s, length(name) + 2))
			next
		}
		(i = index($0, "@@J-END ")) > 0 {
			split(substr($0, i + 8), a, " "); sub(/^rc=/, "", a[2])
			f = out "/" a[1] "/rc"; system("mkdir -p \"" out "/" a[1] "\"")
			print a[2] > f; close(f)
		}' "$log"
	if [ $rc != 0 ] || ! grep -q '@@M .* ALL-DONE' "$log"; then
		echo "run-in-domu: the boot did not finish (qemu exit $rc); console: $log" >&2
		tail -n 40 "$log" >&2
		trap - EXIT
		exit 2
	fi
	exit 0
fi
DOM0_CPIO=$B/dom0-cmd.cpio TIMEOUT=$((secs + 180)) B=$B bash "$here/boot.sh" "$log" \
	xt.phases=cmd xt.disk=$size xt.mem=$mem xt.timeout=$secs
rc=$(sed -n 's/.*\[domu-cmd\] @@CMD-END rc=\([0-9]*\).*/\1/p' "$log" | tail -1)
if [ -z "$rc" ]; then
	echo "run-in-domu: the guest did not run the script; console: $log" >&2
	tail -n 40 "$log" >&2
	trap - EXIT
	exit 2
fi
sed -n '/\[domu-cmd\] @@CMD-BEGIN/,/\[domu-cmd\] @@CMD-END/p' "$log" | sed '1d;$d' |
	sed 's/^\[ *[0-9.]*\] \[domu-cmd\] //'
exit "$rc"
