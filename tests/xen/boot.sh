#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# boot.sh: one bounded boot of Xen 4.17 + the dom0 initramfs in
# qemu-system-x86_64 under TCG.  The serial console (Xen's com1, which also
# carries dom0's hvc0) is written to LOG, each line prefixed with seconds
# since QEMU started.  Returns QEMU's exit status (0: dom0 powered off;
# 124: TIMEOUT expired).
#
# Usage: boot.sh LOG [DOM0-ARG...]     (DOM0-ARG: e.g. xt.phases=bb,cmp)
# Environment: B (build dir with xen-4.17, vmlinuz, dom0.cpio), TIMEOUT
# (seconds, default 540), DOM0_CPIO (default $B/dom0.cpio), CPU (qemu64:
# TCG's SMAP emulation breaks PV dom0 with -cpu max unless Xen gets
# smap=0 smep=0), SMP, MEM, DOM0_MEM (dom0's memory, default 1024M).
set -u
B=${B:?B=build dir}
LOG=${1:?usage: boot.sh LOG [DOM0-ARG...]}
shift
TIMEOUT=${TIMEOUT:-840}
CPU=${CPU:-qemu64}
SMP=${SMP:-2}
MEM=${MEM:-3G}
DOM0_CPIO=${DOM0_CPIO:-$B/dom0.cpio}
DOM0_MEM=${DOM0_MEM:-1024M}
XEN_ARGS="console=com1 com1=115200,8n1 dom0_mem=$DOM0_MEM,max:$DOM0_MEM dom0_max_vcpus=2 loglvl=all guest_loglvl=all console_timestamps=boot"
DOM0_ARGS="console=hvc0 earlyprintk=xen rdinit=/init loglevel=4 $*"
{
	echo "# qemu: -machine q35 -accel tcg,thread=multi -cpu $CPU -m $MEM -smp $SMP, timeout $TIMEOUT s"
	echo "# xen: $XEN_ARGS"
	echo "# dom0: $DOM0_ARGS"
} > "$LOG"
# QEMU's multiboot loader splits -initrd on ',' (",," is a literal comma);
# a module's command line follows its path.  --foreground: QEMU stays in
# our process group, so whoever stops us (Ctrl-C, blkbench's teardown of
# run-in-domu.sh's group) stops it too.
timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 \
	-machine q35 -accel tcg,thread=multi -cpu "$CPU" -m "$MEM" -smp "$SMP" \
	-display none -monitor none -serial stdio -no-reboot \
	-kernel "$B/xen-4.17" -append "$XEN_ARGS" \
	-initrd "$B/vmlinuz ${DOM0_ARGS//,/,,},$DOM0_CPIO" </dev/null 2>&1 |
	perl -MTime::HiRes=time -e '$| = 1; $t0 = time;
		while (<STDIN>) { s/\r//g; printf "[%7.2f] %s", time - $t0, $_ }' >> "$LOG"
rc=${PIPESTATUS[0]}
echo "# exit: $rc" >> "$LOG"
exit "$rc"
