#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the dom0 initramfs used by check-xen: brings up the Xen control
# plane (xenstored, xenconsoled), runs the phases named on the kernel command
# line (xt.phases=bb,pg,bar,cmp by default) and powers off.  No interactive
# shell: everything is reported on the console (hvc0 -> Xen -> com1 -> QEMU
# serial -> check-xen.sh) as markers:
#   @@S NAME / @@T NAME PASS|FAIL|SKIP DETAIL   one test (dom0 or, relayed
#                                                from a guest, "[guest] @@T")
#   @@SKIPALL PREFIX REASON                      every test NAME starting with
#                                                PREFIX is skipped
#   @@M UPTIME WHAT                              progress
# Phases:
#   bb   blkbackd (--transport=xen) serves a guest created by xl with
#        script=block-blkbackd: functional tests, discard, hot-plug, bench,
#        xl destroy, SIGTERM
#   bar  blkbackd advertising feature-barrier alone: ext4 in the guest,
#        WRITE_BARRIER in the trace
#   pg   blkbackd --feature-persistent=1, then =0, against guests whose
#        blkfront offers persistent grants or not: what each side offers
#        in xenstore, what blkfront negotiated, byte-exact data
#   cmp  kernel xen-blkback (phy: on a loop device) and QEMU qdisk serve the
#        same benchmark as bb's
#   co   a guest on kernel xen-blkback while blkbackd starts beside it
#        (refused; with --leave-kernel-vbds, not one write to the guest's
#        vbds), then the README's switch-over of that running guest
#   bench  (make bench-xen) the three backends on the same kind of backing
#        (RAM disks, then files), in rotating order, ROUNDS times: fio,
#        dd, bonnie++, with dom0's CPU time per workload and a watch on
#        dom0's daemons
#   cmd  (run-in-domu.sh) one guest on a blkbackd disk runs /xt-cmd
#   jobs (run-in-domu.sh -J, blkbench --platform xen-nested) the jobs of
#        /xt/jobs, one per line, in order, each in dom0 or in a new guest
/bin/busybox --install -s /bin
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/bin:/sbin:/usr/lib/xen-4.17/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# udev normally provides these; the hotplug scripts' claim_lock needs /dev/stdin
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/xen /run/xenstored /run/lock /var/lib/xen /var/lib/xenstored /var/log/xen/console /var/lock
G=/gnu

arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
PHASES=$(arg xt.phases)
: ${PHASES:=bb,pg,rs,bar,cmp,co}
mark() { echo "@@M $(cut -d' ' -f1 /proc/uptime) $*"; }
start() { echo "@@S $1"; }
result() { local n=$1 r=$2; shift 2; echo "@@T $n $r $*"; }
# check NAME CMD...: run CMD as the test NAME
check() {
	local n=$1 rc
	shift
	start "$n"
	"$@" 2>&1; rc=$?
	if [ $rc = 0 ]; then result "$n" PASS; else result "$n" FAIL "rc=$rc"; fi
	return $rc
}
say() { echo "  $*"; }
now() { cut -d' ' -f1 /proc/uptime; }

# ---------------- guests ----------------
GUESTLOG=/var/log/xen/console
# (the bench's answers, "@@U BX-DONE ...", also go to the FIFO $BX_FIFO
# when there is one: bx_cmd waits on it without polling)
BX_FIFO=/tmp/bx-done
relay() { # NAME: copy the guest's console to ours, prefixed
	(tail -n +1 -F $GUESTLOG/guest-$1.log 2>/dev/null | while IFS= read -r l; do
		echo "[$1] $l"
		case $l in *"@@U BX-DONE "*) [ -p $BX_FIFO ] && echo "$l" > $BX_FIFO ;; esac
	done) &
}
# wait_guest NAME REGEX SECONDS: until the guest's console shows REGEX;
# fails early when the guest is gone
wait_guest() {
	local i=0
	while [ $i -lt $(($3 * 2)) ]; do
		grep -qE "$2" $GUESTLOG/guest-$1.log 2>/dev/null && return 0
		xl domid $1 >/dev/null 2>&1 || { say "guest $1 is gone"; return 1; }
		sleep 0.5
		i=$((i + 1))
	done
	say "timeout: guest $1 did not print /$2/ in $3 s"
	return 1
}
# guest_line NAME REGEX: the guest's last console line matching REGEX
# (xenconsoled keeps the guest's CR LF: drop the CR)
guest_line() { grep -E "$2" $GUESTLOG/guest-$1.log | tail -1 | tr -d '\r'; }
# mkcfg NAME RUN SIZES DISK...: an xl config for one PV guest of ours
# (XT_EXTRA: more for the guest's command line; GUEST_MEM: MiB;
# GUEST_VCPUS: default 2, so that blkfront asks for 2 queues;
# GUEST_RAMDISK: default /boot/domu.cpio)
mkcfg() {
	local name=$1 run=$2 sz=$3 d disks=""
	shift 3
	for d in "$@"; do disks="$disks${disks:+, }'$d'"; done
	cat > /etc/xen/$name.cfg <<EOF
name = "$name"
type = "pv"
kernel = "/boot/vmlinuz"
ramdisk = "${GUEST_RAMDISK:-/boot/domu.cpio}"
extra = "console=hvc0 rdinit=/init loglevel=4 xt.tag=$name xt.run=$run xt.sz=$sz ${XT_EXTRA:-}"
memory = ${GUEST_MEM:-256}
vcpus = ${GUEST_VCPUS:-2}
disk = [ $disks ]
on_crash = "preserve"
EOF
}
# xl_create NAME [VAR=VALUE...]: xl create with the verbose log in /tmp,
# timed; the variables reach the hotplug scripts (xl's environment)
xl_create() {
	local n=$1 t0 rc
	shift
	t0=$(now)
	relay $n
	env "$@" xl -vvv create /etc/xen/$n.cfg > /tmp/xl-create-$n.log 2>&1; rc=$?
	say "xl create $n: rc=$rc in $(echo "$(now) $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
	if [ $rc != 0 ]; then
		grep -iE 'error|fail|timed out|timeout|hotplug|script' /tmp/xl-create-$n.log | tail -n 30
		[ -s /var/log/xen/xen-hotplug.log ] && tail -n 30 /var/log/xen/xen-hotplug.log
	fi
	return $rc
}
# xs_wait PATH VALUE SECONDS: until xenstore PATH reads VALUE ("" = absent)
xs_wait() {
	local i=0 v
	while [ $i -lt $(($3 * 10)) ]; do
		v=$(xenstore-read "$1" 2>/dev/null)
		[ "$v" = "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	say "timeout: $1 is '$v', expected '$2' after $3 s"
	return 1
}
sectors_of() { echo $(($($G/stat -c %s "$1") / 512)); }
# mkimg FILE SIZE: a new sparse image; phase_end removes it when the
# phase that made it ends
PHASE_IMGS=/run/phase-images
mkimg() { rm -f "$1"; truncate -s "$2" "$1" && echo "$1" >> $PHASE_IMGS; }
# backend_connected DOMID DEVID: both ends Connected, hotplug done
backend_connected() {
	local be=/local/domain/0/backend/vbd/$1/$2
	xs_wait $be/state 4 60 || { xenstore-ls -fp $be; return 1; }
	xs_wait /local/domain/$1/device/vbd/$2/state 4 30 || return 1
	[ "$(xenstore-read $be/hotplug-status)" = connected ] || { say "hotplug-status: $(xenstore-read $be/hotplug-status 2>&1)"; return 1; }
	xenstore-ls -f $be | grep -E '/(params|state|feature-[a-z-]*|sectors|sector-size|info|discard-[a-z]*|hotplug-status|max-ring-page-order)' | sed 's/^/  /'
}

# xs_queues DOMID DEVID QUEUES ORDER: the frontend's rings as xenstore
# shows them: multi-queue-num-queues = QUEUES, each queue-N/ with its
# event-channel and 2^ORDER ring-refs (ring-ref for one page, ring-ref0..
# with ring-page-order = ORDER for more), nothing beyond
xs_queues() {
	local fe=/local/domain/$1/device/vbd/$2 q i n=$((1 << $4)) bad=
	xenstore-ls -f $fe | grep -E '/(multi-queue-num-queues|ring-page-order|queue-[0-9]+/.*|ring-ref[0-9]*|event-channel)( |$)' | sed 's/^/  /'
	[ "$(xenstore-read $fe/multi-queue-num-queues 2>/dev/null)" = "$3" ] || bad="$bad multi-queue-num-queues"
	if [ "$4" = 0 ]; then
		! xenstore-exists $fe/ring-page-order || bad="$bad ring-page-order(present)"
	else
		[ "$(xenstore-read $fe/ring-page-order 2>/dev/null)" = "$4" ] || bad="$bad ring-page-order"
	fi
	! xenstore-exists $fe/ring-ref || bad="$bad ring-ref(top level)"
	for q in $(seq 0 $(($3 - 1))); do
		xenstore-exists $fe/queue-$q/event-channel || bad="$bad queue-$q/event-channel"
		if [ "$4" = 0 ]; then
			xenstore-exists $fe/queue-$q/ring-ref || bad="$bad queue-$q/ring-ref"
		else
			for i in $(seq 0 $((n - 1))); do
				xenstore-exists $fe/queue-$q/ring-ref$i || bad="$bad queue-$q/ring-ref$i"
			done
			! xenstore-exists $fe/queue-$q/ring-ref$n || bad="$bad queue-$q/ring-ref$n(present)"
		fi
	done
	! xenstore-exists $fe/queue-$3 || bad="$bad queue-$3(present)"
	[ -z "$bad" ] || { say "expected $3 queues of 2^$4 pages; wrong:$bad"; return 1; }
}
# xs_persistent DOMID BACKEND FRONTEND: once connected, feature-persistent
# reads BACKEND on the backend's side and FRONTEND on the frontend's.  Each
# side writes what it offers (its own setting), as Linux 6.1's xen-blkback
# and xen-blkfront do; both use persistent grants only when both offer them
# (the guest's persist step checks that blkfront did).
xs_persistent() {
	local be=/local/domain/0/backend/vbd/$1/51712 fe=/local/domain/$1/device/vbd/51712 b f
	backend_connected $1 51712 || return 1
	b=$(xenstore-read $be/feature-persistent 2>&1)
	f=$(xenstore-read $fe/feature-persistent 2>&1)
	say "feature-persistent: backend '$b' (expected $2), frontend '$f' (expected $3)"
	[ "$b" = "$2" ] && [ "$f" = "$3" ]
}
# trace_queues DOMID DEVID: blkbackd served good requests on ring 0 and 1
trace_queues() {
	local q n bad=
	for q in 0 1; do
		n=$(trace_count "^(t=[0-9]+ )?vbd=$1/$2 ring=$q op=(read|write) .*status=0")
		say "ring $q: ${n:-0} good reads and writes"
		[ "${n:-0}" -gt 0 ] || bad=1
	done
	[ -z "$bad" ]
}

# xs_features BACKEND FLUSH BARRIER: the advertised flush features
xs_features() {
	local f b
	f=$(xenstore-read $1/feature-flush-cache 2>/dev/null)
	b=$(xenstore-read $1/feature-barrier 2>/dev/null)
	say "feature-flush-cache=$f feature-barrier=$b flush-mode=$(xenstore-read $1/flush-mode 2>&1)"
	[ "$f" = "$2" ] && [ "$b" = "$3" ]
}

# ---------------- blkbackd ----------------
BB=/usr/sbin/blkbackd
BB_PID=/run/blkbackd.pid
BB_TRACE=/tmp/blkbackd.trace
# what the tests want from every daemon run (bench: nothing, it costs time)
BB_DEBUG="-v --trace=$BB_TRACE"
bb_start() { # ARGS...: start the daemon in the foreground-mode background
	rm -f $BB_PID
	# (one relay for every daemon run: the log is appended to)
	if [ ! -e /tmp/blkbackd.log ]; then
		touch /tmp/blkbackd.log
		(tail -n +1 -F /tmp/blkbackd.log 2>/dev/null |
			while IFS= read -r l; do echo "[blkbackd] $l"; done) &
	fi
	# shellcheck disable=SC2086 # BB_DEBUG: one word per option
	$BB -f $BB_DEBUG --transport=xen --pidfile=$BB_PID "$@" >> /tmp/blkbackd.log 2>&1 &
	local i=0
	while [ ! -s $BB_PID ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s $BB_PID ] && kill -0 "$(cat $BB_PID)" 2>/dev/null || { say "blkbackd did not write $BB_PID in 10 s"; return 1; }
	say "blkbackd pid $(cat $BB_PID): $*"
}
bb_alive() { [ -s $BB_PID ] && kill -0 "$(cat $BB_PID)" 2>/dev/null; }
bb_fd_list() { ls -l /proc/"$(cat $BB_PID)"/fd | sed -n 's/.* \([0-9]*\) -> /\1 -> /p'; }
bb_stop() { # SIGTERM; clean exit (0) within 30 s
	local pid i=0
	pid=$(cat $BB_PID) || return 1
	kill -TERM "$pid" || return 1
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		say "blkbackd still running 30 s after SIGTERM; SIGKILL"
		kill -KILL "$pid"
		return 1
	fi
	wait "$pid"
	local rc=$?
	say "blkbackd exited with $rc"
	[ $rc = 0 ]
}
trace_count() { grep -cE "$1" $BB_TRACE 2>/dev/null; }

# ---------------- phase qc: a qcow2 disk through the hotplug script ----------------
# target=qcow2:PATH (blkbackd(8) "Disk images"): xl create runs
# block-blkbackd once blkbackd is in InitWait; the script starts a
# qemu-storage-daemon for the image (a qcow2 over a qcow2 backing file)
# and writes image-socket; blkbackd connects the guest through its nbd
# store.  The guest checks the size, a pattern, ext4 with bonnie++ and
# fsync, and discard; dom0 checks the daemon (running, not blkbackd's
# child), that xl destroy's remove stopped it (process and socket gone),
# and that the image is clean (qemu-img check) with the backing file
# untouched.
export BLKBACKD_STORE_DIR=/usr/lib/blkbackd
qc_daemon() { # BACKEND-DIR: the image's daemon serves it
	local sock pid
	sock=$(xenstore-read $1/image-socket) || { say "no image-socket"; return 1; }
	[ -S "$sock" ] || { say "$sock is not a socket"; return 1; }
	pid=$(cat "${sock%.sock}.pid") && kill -0 "$pid" || { say "no daemon for $sock"; return 1; }
	[ "$(awk '{ print $4 }' /proc/$pid/stat)" != "$(cat $BB_PID)" ] ||
		{ say "qemu-storage-daemon $pid is blkbackd's child"; return 1; }
	say "qemu-storage-daemon $pid on $sock"
	QC_SOCK=$sock QC_PID=$pid
}
qc_gone() { # the daemon and its socket are gone
	local i=0
	while kill -0 "$QC_PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	! kill -0 "$QC_PID" 2>/dev/null || { say "qemu-storage-daemon $QC_PID outlived the detach"; return 1; }
	[ ! -e "$QC_SOCK" ] || { say "$QC_SOCK left behind"; return 1; }
}
qc_image() { # TOP BASE BASE-MD5: clean, and the backing untouched
	qemu-img check "$1" || return 1
	[ "$(md5sum < "$2")" = "$3" ] || { say "the backing file changed"; return 1; }
	say "$(qemu-img info "$1" | grep -E '^(disk size|backing file):' | tr '\n' ' ')"
}
phase_qc() {
	local dom be base=/tmp/qc-base.qcow2 top=/tmp/qc-top.qcow2 sum
	if ! command -v qemu-storage-daemon >/dev/null || [ ! -e $BLKBACKD_STORE_DIR/store-nbd.so ]; then
		echo "@@SKIPALL qc- no qemu-storage-daemon or nbd store module in dom0"
		return
	fi
	qemu-img create -q -f qcow2 $base 128M &&
		qemu-img create -q -f qcow2 -b $base -F qcow2 $top || return
	sum=$(md5sum < $base)
	check qc-daemon-start bb_start || return
	mkcfg domu-qc "size:xvda,pattern:xvda,ext4:xvda,discard:xvda,idle" "xvda:262144" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=qcow2:$top"
	if check qc-xl-create xl_create domu-qc; then
		dom=$(xl domid domu-qc)
		be=/local/domain/0/backend/vbd/$dom/51712
		check qc-connect backend_connected $dom 51712
		check qc-daemon qc_daemon $be
		wait_guest domu-qc '@@U IDLE' 600
		start qc-destroy
		xl destroy domu-qc
		if xs_wait $be "" 30 && qc_gone; then
			result qc-destroy PASS
		else
			result qc-destroy FAIL "backend or qemu-storage-daemon left behind"
		fi
	fi
	check qc-image qc_image $top $base "$sum"
	check qc-sigterm bb_stop
}

# ---------------- bring-up ----------------
mark DOM0-INIT-START kernel=$(uname -r)
start dom0-boot
while read -r m; do insmod "$m" || echo "insmod $m failed"; done < /modules.list
mount -t xenfs xenfs /proc/xen
xenstored --pid-file /run/xenstored.pid &&
	xen-init-dom0 &&
	xenconsoled --log=guest --log-dir=$GUESTLOG --pid-file=/run/xenconsoled.pid &&
	xl info | grep -E '^(release|xen_version|total_memory|free_memory|nr_cpus|xen_commandline)' && ok=1
if [ -n "${ok:-}" ]; then result dom0-boot PASS; else result dom0-boot FAIL "xenstored/xen-init-dom0/xenconsoled"; fi

# ---------------- phase bb: blkbackd ----------------
phase_bb() {
	local dom a=/tmp/bb-a.img b=/tmp/bb-b.img l
	mkimg $a 384M
	mkimg $b 64M
	check bb-daemon-start bb_start || return
	bb_fd_list > /tmp/bb-fds0
	mkcfg domu-bb "size:xvda,queues:xvda,pattern:xvda,ext4:xvda,xfs:xvda,discard:xvda,attach:xvdb,bench:xvda:blkbackd,idle" \
		"xvda:$(sectors_of $a),xvdb:$(sectors_of $b)" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$a"
	mark BB-CREATE
	check bb-xl-create xl_create domu-bb || return
	dom=$(xl domid domu-bb)
	check bb-connect backend_connected $dom 51712
	# 2 vCPUs: blkfront asks for 2 of the queues blkbackd offers
	check bb-multiqueue xs_queues $dom 51712 2 0

	# while domu-bb works: a hostile second guest on the same daemon, and a
	# short-lived one whose blkfront asks for rings of 4 pages (gone before
	# the hostile guest reaches C03, its last case)
	ht_create
	ro_create
	ro_finish

	# the guest's own tests run now; dom0 checks what it can see
	wait_guest domu-bb '@@T domu-bb-xvda-ext4 ' 400
	start bb-trace-queues
	if trace_queues $dom 51712; then result bb-trace-queues PASS; else result bb-trace-queues FAIL "a ring served nothing"; fi
	start bb-trace-flush
	l=$(trace_count 'op=flush .*status=0')
	say "trace: $l FLUSH_DISKCACHE requests, $(wc -l < $BB_TRACE) lines"
	if [ "${l:-0}" -gt 0 ]; then result bb-trace-flush PASS; else result bb-trace-flush FAIL "no flush in the trace"; fi

	start bb-discard-holes
	if wait_guest domu-bb '@@U DISCARDED xvda|@@T domu-bb-xvda-discard ' 300 &&
	   l=$(guest_line domu-bb '@@U DISCARDED xvda') && [ -n "$l" ]; then
		set -- $l
		xt-holes $a $4 $5; r=$?
		say "trace: $(trace_count 'op=discard') discard requests"
		if [ $r = 0 ]; then result bb-discard-holes PASS; else result bb-discard-holes FAIL "range $4+$5 of $a is not a hole"; fi
	else
		result bb-discard-holes FAIL "the guest did not discard"
	fi

	ht_finish

	# hot-plug a second disk, then unplug it: the daemon's fds come back
	if wait_guest domu-bb '@@U WAIT-ATTACH xvdb' 300; then
		bb_fd_list > /tmp/bb-fds1
		check bb-block-attach xl block-attach domu-bb "vdev=xvdb, format=raw, access=rw, script=block-blkbackd, target=$b"
		start bb-block-detach
		if wait_guest domu-bb '@@U ATTACHED-MD5 xvdb|@@T domu-bb-xvdb-attach ' 200 &&
		   l=$(guest_line domu-bb '@@U ATTACHED-MD5 xvdb') && [ -n "$l" ]; then
			set -- $l
			if ! xl block-detach domu-bb xvdb; then
				result bb-block-detach FAIL "xl block-detach failed"
			elif ! xs_wait /local/domain/0/backend/vbd/$dom/51728/state "" 30; then
				result bb-block-detach FAIL "the backend directory is still there"
			else
				sleep 1
				bb_fd_list | diff /tmp/bb-fds1 - | sed -n 's/^\([-+][0-9].*\)/  \1/p' > /tmp/bb-fds-diff
				cat /tmp/bb-fds-diff
				if [ -s /tmp/bb-fds-diff ]; then
					result bb-block-detach FAIL "blkbackd's fds differ after the detach"
				else
					result bb-block-detach PASS
				fi
			fi
			start bb-xvdb-backing
			m=$($G/dd if=$b bs=1M skip=$(($4 / 1048576)) count=$(($5 / 1048576)) 2>/dev/null | $G/md5sum | cut -d' ' -f1)
			say "guest md5 $6, backing md5 $m"
			if [ "$m" = "$6" ]; then result bb-xvdb-backing PASS; else result bb-xvdb-backing FAIL; fi
		else
			result bb-block-detach FAIL "guest did not see xvdb"
		fi
	fi

	# destroy: blkbackd keeps running and holds no more fds than before the
	# guest, apart from xenops' daemon-lifetime handles (/dev/xen/*, opened
	# on first use)
	start bb-destroy
	if wait_guest domu-bb '@@U IDLE' 400; then :; fi
	xl destroy domu-bb
	if xs_wait /local/domain/0/backend/vbd/$dom "" 30 && sleep 1 && bb_alive; then
		bb_fd_list | diff /tmp/bb-fds0 - | sed -n 's/^\([-+][0-9].*\)/  \1/p' > /tmp/bb-fds-diff
		cat /tmp/bb-fds-diff
		if grep -qvE '^  \+[0-9]+ -> /dev/xen/[a-z_]+$' /tmp/bb-fds-diff; then
			result bb-destroy FAIL "fd leak"
		else
			result bb-destroy PASS
		fi
	else
		result bb-destroy FAIL "backend left behind or blkbackd gone"
	fi
	say "trace: $(wc -l < $BB_TRACE) lines; ops: $(sed -n 's/.*op=\([a-z_]*\).*/\1/p' $BB_TRACE | sort | uniq -c | tr '\n' ' ')"
	check bb-sigterm bb_stop
}

# ---------------- the hostile guest (part of phase bb) ----------------
# No xen-blkfront in this guest: blkfront-test is its disk's frontend and
# sends the requests of tests/xen/hostile/*.script as written.  Its vbd
# asks for flush-mode=both (C01 needs barriers).  C03 comes last: it breaks
# the ring, and blkbackd must close that device only.
HOSTILE=C01+C02+C04+C05+C06+C09+C13+C03
ht_create() {
	local h=/tmp/ht.img
	if [ ! -e /etc/xt-has-blkfront-test ]; then
		echo "@@SKIPALL ht- blkfront-test is not built (frontend-test/blkfront-test)"
		return
	fi
	mkimg $h 64M
	# (1 vCPU: blkfront-test drives one ring, and the TCG machine is busy)
	XT_EXTRA=xt.noblkfront=1 GUEST_VCPUS=1 mkcfg domu-ht "hostile:xvda:$HOSTILE,idle" "xvda:$(sectors_of $h)" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$h"
	check ht-xl-create xl_create domu-ht BLKBACKD_FLUSH_MODE=both || return
	HT_DOM=$(xl domid domu-ht)
}
ht_finish() {
	local be
	[ -n "${HT_DOM:-}" ] || return
	be=/local/domain/0/backend/vbd/$HT_DOM/51712
	start ht-isolation
	wait_guest domu-ht '@@U IDLE' 300
	say "hostile guest's vbd: state $(xenstore-read $be/state 2>&1), error '$(xenstore-read $be/error 2>&1)'"
	say "domu-bb's vbd: state $(xenstore-read /local/domain/0/backend/vbd/$(xl domid domu-bb)/51712/state 2>&1)"
	if bb_alive && [ "$(xenstore-read /local/domain/0/backend/vbd/$(xl domid domu-bb)/51712/state)" = 4 ]; then
		result ht-isolation PASS
	else
		result ht-isolation FAIL "blkbackd gone or domu-bb's disk disconnected"
	fi
	start ht-destroy
	xl destroy domu-ht
	if xs_wait /local/domain/0/backend/vbd/$HT_DOM "" 30 && bb_alive; then
		result ht-destroy PASS
	else
		result ht-destroy FAIL "backend left behind or blkbackd gone"
	fi
}

# ---------------- ring-page-order 2 (part of phase bb) ----------------
# xen_blkfront.max_ring_page_order=2 on the guest's command line: blkfront
# takes min(2, the max-ring-page-order blkbackd offers (4)), so each of its
# 2 queues is a ring of 4 pages (ring-ref0..3)
ro_create() {
	local r=/tmp/ro.img
	mkimg $r 64M
	XT_EXTRA=xen_blkfront.max_ring_page_order=2 mkcfg domu-ro "size:xvda,pattern:xvda,idle" \
		"xvda:$(sectors_of $r)" "vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$r"
	check ro-xl-create xl_create domu-ro || return
	RO_DOM=$(xl domid domu-ro)
	check ro-connect backend_connected $RO_DOM 51712 &&
		check ro-ring-order xs_queues $RO_DOM 51712 2 2
}
ro_finish() {
	[ -n "${RO_DOM:-}" ] || return
	start ro-destroy
	wait_guest domu-ro '@@U IDLE' 120
	xl destroy domu-ro
	if xs_wait /local/domain/0/backend/vbd/$RO_DOM "" 30 && bb_alive; then
		result ro-destroy PASS
	else
		result ro-destroy FAIL "backend left behind or blkbackd gone"
	fi
}

# ---------------- phase pg: persistent grants on and off ----------------
# blkbackd --feature-persistent=1|0 (as Linux xen-blkback's module
# parameter feature_persistent) against guests booted with
# xen_blkfront.feature_persistent=1|0.  Each guest names its disk's expected
# outcome (persist:xvda:0|1, what blkfront says it negotiated), then writes
# and reads back a pattern; dom0 checks what each side offers in xenstore.
# Guests pg-BF: B = the daemon's setting, F = the guest's.
pg_guest() { # NAME DAEMON GUEST: create it and check its vbd
	local n=domu-$1 img=/tmp/$1.img dom
	mkimg $img 64M
	XT_EXTRA=xen_blkfront.feature_persistent=$3 mkcfg $n "size:xvda,persist:xvda:$(($2 & $3)),pattern:xvda,idle" \
		"xvda:$(sectors_of $img)" "vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$img"
	check $1-xl-create xl_create $n || return
	dom=$(xl domid $n)
	check $1-offers xs_persistent $dom $2 $3
}
pg_finish() { # NAME...: wait for the guests' own steps, destroy them
	local g
	for g in "$@"; do
		wait_guest domu-$g '@@U IDLE' 300
		xl destroy domu-$g 2>/dev/null
	done
}
phase_pg() {
	check pg-on-daemon-start bb_start --feature-persistent=1 || return
	pg_guest pg-11 1 1
	pg_guest pg-10 1 0
	pg_finish pg-11 pg-10
	check pg-on-sigterm bb_stop || return
	check pg-off-daemon-start bb_start --feature-persistent=0 || return
	pg_guest pg-01 0 1
	pg_finish pg-01
	check pg-off-sigterm bb_stop
}

# ---------------- phase bar: feature-barrier only ----------------
phase_bar() {
	local dom a=/tmp/bar.img nb0 nbd
	mkimg $a 128M
	rm -f $BB_TRACE
	check bar-daemon-start bb_start || return
	mkcfg domu-bar "size:xvda,ext4:xvda" "xvda:$(sectors_of $a)" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$a"
	check bar-xl-create xl_create domu-bar BLKBACKD_FLUSH_MODE=barrier || return
	dom=$(xl domid domu-bar)
	check bar-connect backend_connected $dom 51712 &&
		check bar-features xs_features /local/domain/0/backend/vbd/$dom/51712 0 1
	wait_guest domu-bar '@@U DOMU-DONE' 300
	start bar-trace-barrier
	nb0=$(trace_count 'op=barrier .* segs=0 .*status=0')
	nbd=$(trace_count 'op=barrier .* segs=[1-9][0-9]* .*status=0')
	say "trace: WRITE_BARRIER without data: $nb0, with data: $nbd; FLUSH_DISKCACHE: $(trace_count 'op=flush')"
	if [ "${nb0:-0}" -gt 0 ] && [ "${nbd:-0}" -gt 0 ]; then result bar-trace-barrier PASS; else result bar-trace-barrier FAIL; fi
	xl destroy domu-bar 2>/dev/null
	check bar-sigterm bb_stop
}

# ---------------- phase rs: restarts, an upgrade, a resize ----------------
# A guest verifies its disks (raw patterns on xvda, bonnie++ and md5'd
# files on ext4 on xvdb) while blkbackd is SIGKILLed and started again
# RS_KILLS times at odd instants and upgraded live once; then xvda's
# backing grows and the guest stops when it sees the new size.  The guest
# must never notice: no xenstore state change, no I/O error, data and
# fsck clean.  The pause (kill to "taken over", per restart; the upgrade
# command's duration) is printed for BENCHMARKS.md.
RS_KILLS=${RS_KILLS:-20}
BBCTL=/usr/sbin/blkbackd-ctl
rs_took_over() { # N SECONDS: the log shows N "taken over" lines
	local i=0
	while [ $i -lt $(($2 * 20)) ]; do
		[ "$(grep -c 'taken over, Connected as it was' /tmp/blkbackd.log)" -ge "$1" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}
rs_states() { # DOMID...: every vbd of the guest Connected on both sides
	local be=/local/domain/0/backend/vbd/$1 d
	for d in 51712 51728; do
		[ "$(xenstore-read $be/$d/state)" = 4 ] && [ "$(xenstore-read /local/domain/$1/device/vbd/$d/state)" = 4 ] ||
			{ say "vbd $d: backend $(xenstore-read $be/$d/state 2>&1), frontend $(xenstore-read /local/domain/$1/device/vbd/$d/state 2>&1)"; return 1; }
	done
}
rs_kills() { # DOMID: the restarts; 0 when every one was taken over
	local k n0 t0 t1 pid pauses=
	n0=$(grep -c 'taken over, Connected as it was' /tmp/blkbackd.log)
	for k in $(seq 1 $RS_KILLS); do
		# odd instants: 0.3 to 2.2 s apart
		sleep "$(awk -v k=$k 'BEGIN { srand(k); printf "%.2f", 0.3 + rand() * 1.9 }')"
		if grep -q '@@T domu-rs-xvda-survive ' $GUESTLOG/guest-domu-rs.log; then
			say "restart $k: the guest's step has ended already"
			return 1
		fi
		pid=$(cat $BB_PID)
		t0=$(now)
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		bb_start || return 1
		# each vbd (2) is taken over
		rs_took_over $((n0 + 2 * k)) 60 || { say "restart $k: not taken over in 60 s"; return 1; }
		t1=$(now)
		pauses="$pauses $(echo "$t1 $t0" | awk '{ printf "%.2f", $1 - $2 }')"
		rs_states $1 || { say "restart $k: a vbd left Connected"; return 1; }
	done
	echo "$pauses" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ a[NR] = $1 } END {
		printf "@@PAUSE restart-pause-median-s %s\n@@PAUSE restart-pause-max-s %s\n", a[int((NR + 1) / 2)], a[NR] }'
	say "restart pauses (kill to taken over, s):$pauses"
}
rs_upgrade() { # DOMID
	local pid t0 t1
	pid=$(cat $BB_PID)
	t0=$(now)
	$BBCTL upgrade || return 1
	t1=$(now)
	echo "@@PAUSE upgrade-s $(echo "$t1 $t0" | awk '{ printf "%.2f", $1 - $2 }')"
	[ "$(cat $BB_PID)" = "$pid" ] && kill -0 "$pid" || { say "not the same process after the upgrade"; return 1; }
	rs_states $1
}
phase_rs() {
	local dom a=/tmp/rs-a.img b=/tmp/rs-b.img grown
	mkimg $a 64M
	mkimg $b 256M
	grown=$(( (64 + 32) * 2048 ))
	local debug=$BB_DEBUG
	BB_DEBUG=-v	# no trace: a write per request would stretch every pause
	check rs-daemon-start bb_start || { BB_DEBUG=$debug; return; }
	mkcfg domu-rs "survive:xvda:xvdb" "xvda:$(sectors_of $a),xvdagrown:$grown" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$a" \
		"vdev=xvdb, format=raw, access=rw, script=block-blkbackd, target=$b"
	if check rs-xl-create xl_create domu-rs; then
		dom=$(xl domid domu-rs)
		check rs-connect backend_connected $dom 51712 &&
			wait_guest domu-rs '@@U SURVIVE-RUNNING' 300 &&
			sleep 5 &&	# bonnie++ under way
			check rs-sigkill-restarts rs_kills $dom &&
			check rs-upgrade rs_upgrade $dom &&
			rs_resize $dom $a $grown
		xl destroy domu-rs 2>/dev/null
	fi
	check rs-sigterm bb_stop
	BB_DEBUG=$debug
}
rs_resize() { # DOMID BACKING SECTORS
	start rs-resize
	truncate -s $(($3 * 512)) $2
	# blkbackd rewrites sectors (within its 2 s size check); the guest
	# then sees it and ends its step (domu-rs-xvda-survive checks the size)
	if xs_wait /local/domain/0/backend/vbd/$1/51712/sectors $3 30 &&
	   wait_guest domu-rs '@@U SURVIVE-DONE' 120; then
		result rs-resize PASS
	else
		result rs-resize FAIL "sectors $(xenstore-read /local/domain/0/backend/vbd/$1/51712/sectors 2>&1), expected $3"
	fi
	wait_guest domu-rs '@@U DOMU-DONE' 120
}

# ---------------- phase co: beside kernel xen-blkback ----------------
# What an admin does who installs blkbackd on a dom0 whose guests run on
# kernel xen-blkback (README, "Switching a dom0 over").  A guest on
# xen-blkback (phy: on loop devices) verifies its disks (survive: raw
# patterns on xvda, bonnie++ and md5'd files on ext4 on xvdb) while dom0
# starts blkbackd beside it: refused while xen-blkback is loaded, then,
# with --leave-kernel-vbds, not one write to the guest's vbds (a
# xenstore watch on their directory) and neither backing opened.  The
# guest never notices (no I/O error, data and fsck clean) and ends its
# step when the kernel backend tells it xvda grew.  Then the switch-over
# of the running guest: its disks detached, xen-blkback unloaded,
# blkbackd restarted as usual, the grown disk attached again with
# script=block-blkbackd: the guest writes and reads a pattern through
# blkbackd, and dom0 finds the same bytes on the backing.
co_watch_events() { grep -c . /tmp/co-watch 2>/dev/null || echo 0; }
co_refused() { # blkbackd started as usual exits, naming xen-blkback
	local n0=0
	[ -e /tmp/blkbackd.log ] && n0=$(wc -l < /tmp/blkbackd.log)
	if bb_start; then
		say "blkbackd started beside a loaded xen-blkback"
		bb_stop
		return 1
	fi
	tail -n +$((n0 + 1)) /tmp/blkbackd.log | grep 'xen-blkback' | head -3 | sed 's/^/  /'
	tail -n +$((n0 + 1)) /tmp/blkbackd.log | grep -q 'xen-blkback' ||
		{ say "the refusal does not name xen-blkback"; return 1; }
}
co_untouched() { # DOMID WATCH0 LOOP...: no write to the guest's vbds, no backing open
	local pid l n
	pid=$(cat $BB_PID)
	n=$(co_watch_events)
	say "xenstore watch events on the guest's vbds: $2 before blkbackd, $n after"
	[ "$n" = "$2" ] || { tail -n +$(($2 + 1)) /tmp/co-watch | head -20; return 1; }
	xenstore-ls -fp /local/domain/0/backend/vbd/$1 | sort > /tmp/co-after
	cmp -s /tmp/co-before /tmp/co-after ||
		{ diff /tmp/co-before /tmp/co-after | head -20; say "the guest's backend directories changed"; return 1; }
	shift 2
	for l in "$@"; do
		if ls -l /proc/$pid/fd | grep -q -- "-> $l\$"; then say "blkbackd opened $l"; return 1; fi
	done
}
co_resize() { # DOMID IMG LOOP SECTORS: the kernel backend tells the guest
	start co-resize
	if truncate -s $(($4 * 512)) $2 && /sbin/losetup -c $3 &&
	   xs_wait /local/domain/0/backend/vbd/$1/51712/sectors $4 60 &&
	   wait_guest domu-co '@@U SURVIVE-DONE' 120; then
		result co-resize PASS
	else
		result co-resize FAIL "sectors $(xenstore-read /local/domain/0/backend/vbd/$1/51712/sectors 2>&1), expected $4"
	fi
}
co_detach() { # DOMID LOOP...: the guest's kernel-served disks go, the module too
	local d l
	for d in xvda xvdb; do xl block-detach domu-co $d || return 1; done
	for d in 51712 51728; do xs_wait /local/domain/0/backend/vbd/$1/$d/state "" 30 || return 1; done
	shift
	for l in "$@"; do /sbin/losetup -d $l || return 1; done
	bb_stop || return 1
	rmmod xen_blkback || return 1
	[ ! -e /sys/module/xen_blkback ] || { say "xen_blkback still loaded"; return 1; }
}
co_attach() { # DOMID IMG: served by blkbackd; the guest checks it, dom0 the backing
	local dom=$1 img=$2 l m
	bb_start || return 1
	xl block-attach domu-co "vdev=xvdc, format=raw, access=rw, script=block-blkbackd, target=$img" || return 1
	backend_connected $dom 51744 || return 1
	wait_guest domu-co '@@U ATTACHED-MD5 xvdc|@@T domu-co-xvdc-attach ' 200 || return 1
	l=$(guest_line domu-co '@@U ATTACHED-MD5 xvdc') && [ -n "$l" ] || return 1
	set -- $l
	xl block-detach domu-co xvdc || return 1
	m=$($G/dd if=$img bs=1M skip=$(($4 / 1048576)) count=$(($5 / 1048576)) 2>/dev/null | $G/md5sum | cut -d' ' -f1)
	say "guest md5 $6, backing md5 $m"
	[ "$m" = "$6" ]
}
phase_co() {
	local dom a=/tmp/co-a.img b=/tmp/co-b.img la lb grown w0 wpid
	mkimg $a 64M
	mkimg $b 256M
	grown=$(( (64 + 32) * 2048 ))
	start co-setup
	while read -r m; do insmod "$m" || echo "insmod $m failed"; done < /modules-blkback.list
	la=$(/sbin/losetup -f --show $a) && lb=$(/sbin/losetup -f --show $b) &&
		[ -e /sys/module/xen_blkback ] || { result co-setup FAIL "xen-blkback or the loop devices"; return; }
	result co-setup PASS
	mkcfg domu-co "survive:xvda:xvdb,attach:xvdc" \
		"xvda:$(sectors_of $a),xvdagrown:$grown,xvdc:$grown" "phy:$la,xvda,w" "phy:$lb,xvdb,w"
	if check co-xl-create xl_create domu-co; then
		dom=$(xl domid domu-co)
		if check co-connect backend_connected $dom 51712 &&
		   wait_guest domu-co '@@U SURVIVE-RUNNING' 300; then
			xenstore-ls -fp /local/domain/0/backend/vbd/$dom | sort > /tmp/co-before
			xenstore-watch /local/domain/0/backend/vbd/$dom > /tmp/co-watch 2>&1 &
			wpid=$!
			sleep 2	# its first event (a new watch fires once)
			w0=$(co_watch_events)
			check co-refused co_refused
			check co-daemon-start bb_start --leave-kernel-vbds &&
				sleep 10 &&	# the guest's I/O goes on beside it
				check co-untouched co_untouched $dom "$w0" $la $lb
			kill $wpid 2>/dev/null
			co_resize $dom $a $la $grown
			wait_guest domu-co '@@U WAIT-ATTACH xvdc' 120 &&
				check co-detach co_detach $dom $la $lb &&
				check co-attach co_attach $dom $a
			wait_guest domu-co '@@U DOMU-DONE' 120
		fi
		xl destroy domu-co 2>/dev/null
	fi
	bb_alive && bb_stop
	[ -e /sys/module/xen_blkback ] && rmmod xen_blkback
}

# ---------------- phase cmp: kernel blkback and QEMU qdisk ----------------
phase_cmp() {
	local a=/tmp/kb.img b=/tmp/qd.img
	mkimg $a 384M
	mkimg $b 384M
	start cmp-setup
	while read -r m; do insmod "$m" || echo "insmod $m failed"; done < /modules-blkback.list
	if losetup /dev/loop0 $a && [ -x /usr/libexec/xen-qemu-system-i386 ]; then
		result cmp-setup PASS
	else
		result cmp-setup FAIL "loop device or qemu missing"
		return
	fi
	mkcfg domu-cmp "size:xvda,size:xvdb,bench:xvda:blkback,bench:xvdb:qdisk" \
		"xvda:$(sectors_of $a),xvdb:$(sectors_of $b)" \
		"phy:/dev/loop0,xvda,w" \
		"format=raw, vdev=xvdb, access=rw, backendtype=qdisk, target=$b"
	check cmp-xl-create xl_create domu-cmp || return
	wait_guest domu-cmp '@@U DOMU-DONE' 400
	xl destroy domu-cmp 2>/dev/null
	# blkbackd refuses to start beside xen-blkback: a phase after this
	# one (PHASES=cmp,cmd) must find it gone, as bench's rounds do
	rmmod xen_blkback 2>/dev/null || say "rmmod xen_blkback failed: a later blkbackd will refuse to start"
}

# ---------------- phase lw: blkcrash over dm-log-writes ----------------
# The kernel's log-writes target between a backend and a RAM disk logs
# what reaches the disk (on a second RAM disk); a guest without
# xen-blkfront runs blkfront-test verify with its guest log as the disk's
# frontend; then "blkcrash check" judges the backend from outside it.
# blkbackd honest must pass, blkbackd --unsafe-ignore-flush must be
# CAUGHT (exit 1), kernel xen-blkback and QEMU qdisk must pass.
# Two more rounds on blkbackd put a filesystem in the guest (xen-blkfront,
# ext4, files fsync'd): mounted with barriers (must pass) and nobarrier
# (the guest drops its own flushes: must be CAUGHT), judged by blkcrash
# fsck and by the files the guest's fsync acknowledged (lw_fs_round).
# QEMU's qdisk cannot be made to drop flushes through xl: libxl hands it
# params, mode, direct-io-safe and discard-enable only, and xen-block
# opens the image with flushes honoured (DESIGN-NOTES.md, blkcrash).
# In the default PHASES since phase_end empties /tmp between phases; its
# peak there is 192 MiB (an ext4 round: log, base and durable image),
# beside 128 MiB of RAM disks.  Alone: PHASES=lw make check-xen.
# xt.lw=full (blkbench crash --platform xen-nested, the campaign) adds
# the ext4 rounds under kernel blkback and qdisk and an ext4 round on
# blkbackd --unsafe-ignore-flush; xt.lwpoints=N sets the crash points
# of each ext4 round (default 16).  Every round ends with one line
#   @@LW name=N backend=B config=C workload=W want=pass|caught \
#        verdict=pass|caught|FAIL secs=S records=R flushes=F ...
# with the round's own counts after (the verify rounds: guest_flushes,
# promised, lost; the ext4 rounds: points, fsck_failed, fsync_lost=L/T),
# which blkbench crash turns into its table.
# The rounds themselves are lw-rounds.sh, shared with a real dom0's
# campaign (tests/xen/crash-host.sh); here they get brd RAM disks.
LW_DM=lw
LW_DEV=/dev/mapper/$LW_DM
LW_LOGDEV=/dev/ram1
LW_TMP=/tmp
LW_GNU=/gnu	# GNU cp (--sparse) and e2fsck for blkcrash fsck
LW_GUEST=domu-lw
LW_SET=$(arg xt.lw)
LW_FSCK_POINTS=$(arg xt.lwpoints)
: "${LW_SET:=quick}" "${LW_FSCK_POINTS:=16}"
. /lw-rounds.sh
export DM_DISABLE_UDEV=1	# no udev here: libdevmapper makes the nodes
# lw_setup [BASE] (lw-rounds.sh): two fresh RAM disks of 64 MiB and the
# dm device over them; with BASE, an ext4 on the data disk, copied to BASE
lw_setup() {
	/sbin/dmsetup remove lw 2>/dev/null
	rmmod brd 2>/dev/null
	while read -r m; do
		case $m in */brd.ko*) insmod "$m" rd_nr=2 rd_size=65536 || return 1 ;;
		*) insmod "$m" 2>/dev/null ;;
		esac
	done < /modules-brd.list
	[ -b /dev/ram1 ] || { say "brd: no /dev/ram1"; return 1; }
	if [ -n "${1:-}" ]; then
		$G/mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 /dev/ram0 ||
			return 1
		dd if=/dev/ram0 of="$1" bs=1M status=none || return 1
	fi
	/sbin/dmsetup create lw --table "0 $(blockdev --getsz /dev/ram0) log-writes /dev/ram0 /dev/ram1" ||
		return 1
	[ -b $LW_DEV ] || { say "no $LW_DEV"; return 1; }
}
phase_lw() {
	if [ ! -x /sbin/dmsetup ] || [ ! -x /usr/local/bin/blkcrash ] ||
	   [ ! -e /etc/xt-has-blkfront-test ]; then
		echo "@@SKIPALL lw- dmsetup, blkcrash or blkfront-test missing from the image"
		return
	fi
	say "rounds: $LW_SET, $LW_FSCK_POINTS crash points per ext4 round"
	while read -r m; do insmod "$m" 2>/dev/null; done < /modules-dm.list
	while read -r m; do insmod "$m" 2>/dev/null; done < /modules-fs.list
	local disk="vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$LW_DEV"
	local LW_BACKEND LW_CONFIG
	# blkbackd first: it refuses to start beside a loaded xen-blkback
	LW_BACKEND=blkbackd
	if bb_start; then
		LW_CONFIG=honoured lw_round bbd 0 "$disk"
		LW_CONFIG=honoured lw_fs_round fsb barrier 0 "$disk"
		LW_CONFIG=guest-nobarrier lw_fs_round fsn nobarrier 1 "$disk"
		bb_stop
	fi
	if bb_start --unsafe-ignore-flush; then
		LW_CONFIG=unsafe-ignore-flush lw_round ign 1 "$disk"
		[ "$LW_SET" != full ] ||
			LW_CONFIG=unsafe-ignore-flush lw_fs_round ifs barrier 1 "$disk"
		bb_stop
	fi
	LW_BACKEND=kernel-blkback LW_CONFIG=honoured
	while read -r m; do insmod "$m" || echo "insmod $m failed"; done < /modules-blkback.list
	lw_round kb 0 "phy:$LW_DEV,xvda,w"
	if [ "$LW_SET" = full ]; then
		lw_fs_round kfb barrier 0 "phy:$LW_DEV,xvda,w"
		LW_CONFIG=guest-nobarrier lw_fs_round kfn nobarrier 1 "phy:$LW_DEV,xvda,w"
	fi
	rmmod xen_blkback 2>/dev/null
	LW_BACKEND=qdisk LW_CONFIG=honoured
	local qd="format=raw, vdev=xvda, access=rw, backendtype=qdisk, target=$LW_DEV"
	if [ -x /usr/libexec/xen-qemu-system-i386 ]; then
		lw_round qd 0 "$qd"
		if [ "$LW_SET" = full ]; then
			lw_fs_round qfb barrier 0 "$qd"
			LW_CONFIG=guest-nobarrier lw_fs_round qfn nobarrier 1 "$qd"
		fi
	else
		echo "@@SKIPALL lw-qd- QEMU (xen-qemu-system-i386) is not in the image"
		echo "@@SKIPALL domu-lwqd- QEMU (xen-qemu-system-i386) is not in the image"
	fi
	/sbin/dmsetup remove lw 2>/dev/null
	rmmod brd 2>/dev/null
}

# ---------------- phase cmd: run-in-domu.sh ----------------
phase_cmd() {
	local a=/tmp/cmd.img
	GUEST_MEM=$(arg xt.mem)
	mkimg $a "$(arg xt.disk)"
	check cmd-daemon-start bb_start || return
	mkcfg domu-cmd "cmd:xvda" "xvda:$(sectors_of $a)" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$a"
	check cmd-xl-create xl_create domu-cmd || return
	wait_guest domu-cmd '@@U DOMU-DONE' "$(arg xt.timeout)"
	xl destroy domu-cmd 2>/dev/null
	check cmd-sigterm bb_stop
}

# ---------------- phase jobs: run-in-domu.sh -J ----------------
# /xt/jobs, one job per line:
#   ID PLACE SCRIPT WCE BARRIER DISK_MIB MEM_MIB SECONDS
# PLACE dom0: sh /xt/SCRIPT runs here on a loop device over a new sparse
#   file of DISK_MIB on dom0's tmpfs, whose queue/write_cache says "write
#   through" (WCE 0: the kernel sends no flushes, as to a disk after
#   hdparm -W0) or "write back" (WCE 1).
# PLACE domU: a new guest (MEM_MIB + 192 MiB, at least 256: the initramfs
#   lives in RAM; 1 vCPU) runs it on xvda, a
#   new sparse file of DISK_MIB served by blkbackd with cache=writethrough
#   (WCE 0) or writeback (1) and flush-mode=none (BARRIER 0) or auto (1:
#   feature-flush-cache only over writeback, as Linux blkback; the guest's
#   blkfront sets its queue's write cache from it),
#   through the hotplug script's BLKBACKD_CACHE/BLKBACKD_FLUSH_MODE; its
#   output comes back on xvdb (a tar archive, domU-init.sh "job:").
# Either way the script gets XT_DISK, XT_OUT (a directory for the files it
# writes), XT_MNT and XT_GNU (where the GNU tools and fsmark are: call them
# by that path, busybox sh prefers its own applets); its output and status
# become XT_OUT/stdout and XT_OUT/rc.  Every file of XT_OUT is printed as
# "@@O ID NAME LINE" lines between "@@J-BEGIN ID" and "@@J-END ID rc=N" (N:
# the script's status; 124 after SECONDS; 2 when it never ran).
job_emit() { # ID DIR
	local f
	for f in "$2"/*; do
		[ -f "$f" ] || continue
		while IFS= read -r l || [ -n "$l" ]; do echo "@@O $1 ${f##*/} $l"; done < "$f"
	done
}
job_dom0() { # ID SCRIPT WCE DISK_MIB SECONDS
	local img=/tmp/xt-$1.img o=/tmp/xt-out-$1 dev rc
	mkdir -p $o /tmp/xt-mnt-$1
	mkimg $img "$4M"
	dev=$(/sbin/losetup -f --show $img) || { echo 2 > $o/rc; return; }
	if [ "$3" = 0 ]; then echo "write through"; else echo "write back"; fi > /sys/block/${dev#/dev/}/queue/write_cache
	say "job $1: dom0 on $dev ($4 MiB on tmpfs, write_cache $(cat /sys/block/${dev#/dev/}/queue/write_cache))"
	XT_GNU=/gnu XT_DISK=$dev XT_OUT=$o XT_MNT=/tmp/xt-mnt-$1 \
		timeout "$5" sh /xt/$2 > $o/stdout 2>&1
	echo $? > $o/rc
	cat $o/stdout
	umount /tmp/xt-mnt-$1 2>/dev/null
	/sbin/losetup -d $dev
	rm -f $img
}
job_domu() { # ID SCRIPT WCE BARRIER DISK_MIB MEM_MIB SECONDS
	local n=domu-j$1 a=/tmp/xt-$1.img out=/tmp/xt-outdisk-$1.img o=/tmp/xt-out-$1 i=0 dom
	local cache=writeback flush=auto
	[ "$3" = 1 ] || cache=writethrough
	[ "$4" = 1 ] || flush=none
	mkdir -p $o
	mkimg $a "$5M"
	mkimg $out 16M
	local gm=$(($6 + 192))
	[ $gm -ge 256 ] || gm=256
	GUEST_MEM=$gm GUEST_VCPUS=1 mkcfg $n "job:xvda:$2:xvdb" "xvda:$(sectors_of $a)" \
		"vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$a" \
		"vdev=xvdb, format=raw, access=rw, script=block-blkbackd, target=$out"
	say "job $1: domU $n, cache=$cache flush-mode=$flush, $5 MiB on dom0's tmpfs"
	if xl_create $n BLKBACKD_CACHE=$cache BLKBACKD_FLUSH_MODE=$flush; then
		dom=$(xl domid $n)
		wait_guest $n '@@U (JOB-END|DOMU-DONE)|Kernel panic' "$7"
		# the guest powers itself off once its output is on xvdb
		while xl domid $n >/dev/null 2>&1 && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
		xl destroy $n 2>/dev/null
		xs_wait /local/domain/0/backend/vbd/$dom "" 10 >/dev/null
		tar -xf $out -C $o 2>/dev/null || say "job $1: no output archive on the guest's xvdb"
	fi
	[ -s $o/rc ] || echo 2 > $o/rc
	rm -f $a $out
}
phase_jobs() {
	local id place script wce barrier disk mem secs
	while read -r m; do insmod "$m" || echo "insmod $m failed"; done < /modules-fs.list
	mkdir -p /sys/fs/cgroup
	mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control
	if grep -q ' domU ' /xt/jobs; then
		bb_start || { echo "@@SKIPALL jobs blkbackd did not start"; return; }
	fi
	while read -r id place script wce barrier disk mem secs; do
		[ -n "$id" ] || continue
		echo "@@J-BEGIN $id"
		mark JOB-$id $place $script
		case $place in
		dom0) job_dom0 $id $script $wce $disk $secs ;;
		domU) job_domu $id $script $wce $barrier $disk $mem $secs ;;
		*) mkdir -p /tmp/xt-out-$id; echo "unknown place $place" > /tmp/xt-out-$id/stdout; echo 2 > /tmp/xt-out-$id/rc ;;
		esac
		job_emit $id /tmp/xt-out-$id
		echo "@@J-END $id rc=$(cat /tmp/xt-out-$id/rc)"
		rm -rf /tmp/xt-out-$id
	done < /xt/jobs
	bb_alive && bb_stop
}

# ---------------- phase bench: make bench-xen ----------------
# Tables (xt.bx_tables, default "block file"), one after the other, each
# with its own guest (2 vCPUs, 512 MiB, domU-init.sh "rpc") and three
# disks of BX_DISK_MIB, the same kind of backing for every backend:
#   block  RAM disks (brd): blkbackd on /dev/ram0 (script=block-blkbackd,
#          xvda), kernel xen-blkback on phy:/dev/ram1 (xvdb), QEMU qdisk
#          on /dev/ram2 (backendtype=qdisk, xvdc; QEMU opens a block
#          device with its host_device driver) -- how a dom0 serves LVs
#          and partitions
#   file   files on one tmpfs (/bx-files): blkbackd on blkbackd.img,
#          xen-blkback on /dev/loop0 over blkback.img (the kernel backend
#          needs a block device: the loop device is what it costs to serve
#          a file with it), qdisk on qdisk.img
# Every backing is written in full before the first round, so no backend
# pays for the first allocation of its pages.  Round after round each
# backend runs every workload (BX_WL); the order of the backends rotates
# (round 1 blkbackd blkback qdisk, round 2 blkback qdisk blkbackd, round
# 3 qdisk blkbackd blkback, ...).  blkbackd and xen-blkback both serve
# every device under backend/vbd, so they never run at the same time:
# blkbackd's disk is hot-plugged with the daemon started, unplugged and
# the daemon stopped after its turn; xen-blkback is loaded for its disk
# and unloaded after.  qdisk's disk (backend/qdisk, whose QEMU libxl
# starts with the guest) stays attached for the whole table.
# Around each workload dom0 reads /proc/stat: "@@C ID dom0_busy=TICKS ..."
# (user+nice+system+irq+softirq of both vCPUs: blkback's kernel threads,
# blkbackd and QEMU alike; steal apart); the guest prints its numbers and
# block-layer counters as "@@R ID ...".  IDs are TABLE:ROUND:LABEL:WL.
# "@@P TABLE:R LABEL ..." records what each disk negotiated, "@@O TABLE
# R LABEL..." each round's order, "@@BK TABLE LABEL TARGET" each backing.
# A watch (health_loop) checks dom0's daemons.
# BX_WL: the workloads, in order (make bench-xen BX_WL="...": xt.bx_wl, commas)
BX_WL=$(arg xt.bx_wl | tr , ' ')
: ${BX_WL:=ddw ddr rr1 rr32 rw1 rw32 fsync bonnie}
BX_LABELS="blkbackd blkback qdisk"
BX_DOM=	# the bench guest of the current table (domu-bx-TABLE)
BX_TABLE=
BX_CUR=	# the backend whose turn it is
BX_QEMU=	# the qdisk QEMU's pid
bx_vdev() { case $1 in blkbackd) echo xvda ;; blkback) echo xvdb ;; qdisk) echo xvdc ;; esac; }
bx_devid() { case $1 in blkbackd) echo 51712 ;; blkback) echo 51728 ;; qdisk) echo 51744 ;; esac; }
bx_be() { # LABEL DOMID: its backend directory
	case $1 in qdisk) echo /local/domain/0/backend/qdisk/$2/$(bx_devid $1) ;;
	*) echo /local/domain/0/backend/vbd/$2/$(bx_devid $1) ;; esac
}
# bx_target TABLE LABEL: what the backend is given (blkback: a block
# device in both tables)
bx_target() {
	case $1:$2 in
	block:blkbackd) echo /dev/ram0 ;;
	block:blkback) echo /dev/ram1 ;;
	block:qdisk) echo /dev/ram2 ;;
	file:blkback) echo /dev/loop0 ;;
	file:*) echo $BX_FILES/$2.img ;;
	esac
}
# bx_order R: round R's order of the backends (rotated by R-1)
bx_order() {
	local n=$((($1 - 1) % 3))
	set -- $BX_LABELS
	case $n in 0) echo "$1 $2 $3" ;; 1) echo "$2 $3 $1" ;; 2) echo "$3 $1 $2" ;; esac
}
cpu_now() { awk '$1 == "cpu" { printf "%d %d %d", $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9 }' /proc/stat; }
# bx_pids LABEL: the backend's own tasks in dom0: blkbackd's process, the
# kernel threads xen-blkback starts per ring (Linux names them
# DOMID.DEV-RING, e.g. "1.xvdb-0": blkback_name), the qdisk QEMU (BX_QEMU)
bx_pids() {
	local p v
	case $1 in
	blkbackd) cat $BB_PID ;;
	blkback)
		v=$(bx_vdev blkback)
		for p in /proc/[0-9]*; do
			case $(cat $p/comm 2>/dev/null) in [0-9]*.$v-[0-9]*) echo ${p#/proc/} ;; esac
		done
		;;
	qdisk) echo $BX_QEMU ;;
	esac
}
# bx_ticks PID...: "USER SYSTEM", their time in USER_HZ ticks (a
# process's /proc/PID/stat sums its threads; interrupts and softirqs
# are not in it)
bx_ticks() {
	local p u=0 k=0 n
	for p in "$@"; do
		n=$(awk '{ print $14, $15 }' /proc/$p/stat 2>/dev/null)
		[ -n "$n" ] || continue
		u=$((u + ${n% *}))
		k=$((k + ${n#* }))
	done
	echo "$u $k"
}
# bx_cmd ID SECONDS CMD DISK [WORKLOAD]: one command to the bench guest,
# written on its console input through the pty xenconsoled keeps for it
# (BX_TTY, as xl console would type it), and its answer from the relay
# (fd 3: the FIFO, read end); dom0's CPU time from just before the command
# to the answer.  Every BX_POLL (default 5) s without an answer it checks
# that the guest still exists (xl domid).  Nothing polls meanwhile: dom0 stays as idle as it can.
bx_cmd() {
	local id=$1 secs=$2 c0 c1 t0 t1 l w=0 pids p0="0 0" p1="0 0"
	shift 2
	# (BX_PIDS: the backend's tasks, known already: bx_pids reads every
	# /proc/PID/comm, seconds in a PV dom0 under TCG, and a traced pass
	# (bx_lat) times its window from the moment it calls bx_cmd)
	[ "$1" != run ] || { pids=${BX_PIDS:-$(bx_pids $BX_CUR)}; p0=$(bx_ticks $pids); }
	c0=$(cpu_now)
	t0=$(now)
	printf '%s\n' "$1 $id $2 ${3:-}" > "$BX_TTY" || return 1
	while :; do
		if read -r -t ${BX_POLL:-5} l <&3; then
			case $l in *"@@U BX-DONE $id "*) break ;; esac
			continue	# an earlier command's answer
		fi
		w=$((w + ${BX_POLL:-5}))
		[ $w -lt "$secs" ] || { say "no answer to $1 $id in $secs s"; return 1; }
		xl domid $BX_DOM >/dev/null 2>&1 || { say "guest $BX_DOM is gone"; return 1; }
	done
	c1=$(cpu_now)
	t1=$(now)
	[ "$1" != run ] || p1=$(bx_ticks $pids)
	[ "$1" = run ] && echo "@@C $id $(echo "$c0 $c1 $t0 $t1" | awk '{
		printf "dom0_busy=%d dom0_total=%d dom0_steal=%d dom0_secs=%.2f", $4 - $1, $5 - $2, $6 - $3, $8 - $7 }') $(echo "$p0 $p1" | awk '{
		printf "backend_ticks=%d backend_uticks=%d backend_sticks=%d", $3 + $4 - $1 - $2, $3 - $1, $4 - $2 }') backend_tasks=$(echo $pids | wc -w)"
	case $l in *" rc=0"*) ;; *) say "$l"; return 1 ;; esac
}
# bx_params ID LABEL DOMID: what the disk negotiated (absent keys: 1 queue,
# one-page rings)
bx_params() {
	local be fe q o
	be=$(bx_be $2 $3)
	fe=/local/domain/$3/device/vbd/$(bx_devid $2)
	q=$(xenstore-read $fe/multi-queue-num-queues 2>/dev/null || echo 1)
	o=$(xenstore-read $fe/ring-page-order 2>/dev/null || echo 0)
	# (one key each: a line of this length is still readable)
	local bp fp ind fl ba di mq mo
	bp=$(xenstore-read $be/feature-persistent 2>/dev/null || echo -)
	fp=$(xenstore-read $fe/feature-persistent 2>/dev/null || echo -)
	ind=$(xenstore-read $be/feature-max-indirect-segments 2>/dev/null || echo 0)
	fl=$(xenstore-read $be/feature-flush-cache 2>/dev/null || echo 0)
	ba=$(xenstore-read $be/feature-barrier 2>/dev/null || echo 0)
	di=$(xenstore-read $be/feature-discard 2>/dev/null || echo 0)
	mq=$(xenstore-read $be/multi-queue-max-queues 2>/dev/null || echo -)
	mo=$(xenstore-read $be/max-ring-page-order 2>/dev/null || echo -)
	echo "@@P $1 $2 queues=$q ring_order=$o be_persistent=$bp fe_persistent=$fp indirect=$ind" \
		"flush=$fl barrier=$ba discard=$di max_queues=$mq max_ring_order=$mo"
}
bx_qemu() { # DOMID: the QEMU libxl started for the guest, watched
	local p
	p=$(xenstore-read /local/domain/$1/image/device-model-pid 2>/dev/null)
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null || { say "no device-model-pid for domain $1"; return 1; }
	say "qdisk QEMU: pid $p: $(tr '\0' ' ' < /proc/$p/cmdline)"
	BX_QEMU=$p
	health_watch qdisk-qemu "$p"
}
bx_ready() { # DOMID: the guest waits for commands; its console's pty
	wait_guest $BX_DOM '@@U BX-READY' 300 || return 1
	BX_TTY=$(xenstore-read /local/domain/$1/console/tty)
	say "the guest's console: ${BX_TTY:-no tty in xenstore}"
	[ -c "$BX_TTY" ]
}
bx_attach() { # ID LABEL DOMID
	local v t
	v=$(bx_vdev $2)
	t=$(bx_target $BX_TABLE $2)
	case $2 in
	blkbackd)
		bb_start || return 1
		health_watch blkbackd "$(cat $BB_PID)"
		xl block-attach $BX_DOM "vdev=$v, format=raw, access=rw, script=block-blkbackd, target=$t" || return 1
		;;
	blkback)
		while read -r m; do insmod "$m" || { say "insmod $m failed"; return 1; }; done < /modules-blkback.list
		xl block-attach $BX_DOM "phy:$t,$v,w" || return 1
		;;
	esac
	xs_wait $(bx_be $2 $3)/state 4 60 || return 1
	xs_wait /local/domain/$3/device/vbd/$(bx_devid $2)/state 4 30 || return 1
	bx_params $1 $2 $3
	bx_cmd $1:$2:wait 120 wait $v
}
bx_detach() { # ID LABEL DOMID
	local v
	v=$(bx_vdev $2)
	[ $2 != qdisk ] || return 0
	xl block-detach $BX_DOM $v || return 1
	xs_wait $(bx_be $2 $3) "" 30 || return 1
	bx_cmd $1:$2:gone 120 gone $v || return 1
	case $2 in
	blkbackd) health_forget blkbackd; bb_stop ;;
	blkback) rmmod xen_blkback ;;
	esac
}
# bx_bbstats ID: "@@Q ID JSON": blkbackd's counters and latency histogram (ring to
# response, blkbackd-ctl stats --json) after ID; the report takes the
# difference between two such lines as blkbackd's share of a workload
# (after dom0's CPU reading: not counted in it)
bx_bbstats() {
	echo "@@Q $1 $($BBCTL stats --json 2>&1 | tr -d '\n')"
}
# bx_fill PATH MIB: write it in full (zeros), so that its pages exist
bx_fill() {
	local out
	out=$($G/dd if=/dev/zero of="$1" bs=1M count="$2" conv=fsync 2>&1) || { echo "$out"; return 1; }
	echo "$out" | tail -1
}
BX_FILES=/bx-files	# the file table's filesystem: a tmpfs of its own
# bx_backings_up TABLE / bx_backings_down TABLE: the table's three
# backings, written in full; removed after (brd unloaded: its memory back)
bx_backings_up() {
	local l t f
	case $1 in
	block)
		# one RAM disk per backend, rd_size in KiB
		while read -r m; do
			case $m in */brd.ko*) insmod "$m" rd_nr=3 rd_size=$((BX_DISK_MIB * 1024)) || return 1 ;;
			*) insmod "$m" || return 1 ;; esac
		done < /modules-brd.list
		[ -b /dev/ram2 ] || { say "brd loaded, no /dev/ram2"; return 1; }
		;;
	file)
		# one tmpfs for the three files, room for them all (/tmp's default,
		# half of dom0's memory, is not)
		mkdir -p $BX_FILES
		mount -t tmpfs -o size=$((3 * BX_DISK_MIB + 16))m tmpfs $BX_FILES || return 1
		for l in $BX_LABELS; do mkimg $BX_FILES/$l.img ${BX_DISK_MIB}M; done
		/sbin/losetup /dev/loop0 $BX_FILES/blkback.img || return 1
		;;
	esac
	for l in $BX_LABELS; do
		t=$(bx_target $1 $l)
		f=$(bx_fill $t $BX_DISK_MIB) || { say "$l: $t: $f"; return 1; }
		say "$l: $t: $f"
		if [ -b $t ]; then
			echo "@@BK $1 $l $t kind=block bytes=$(blockdev --getsize64 $t)"
		else
			echo "@@BK $1 $l $t kind=file bytes=$($G/stat -c %s $t) fs=$(df -P $t | awk 'NR == 2 { print $1 " " $6 }' | tr ' ' :)"
		fi
	done
	say "dom0 memory (MiB): $(free -m | awk '/^Mem:/ { print "total " $2 ", used " $3 ", free " $4 ", shared " $5 ", available " $7 }')"
}
bx_backings_down() {
	case $1 in
	block) rmmod brd ;;
	file) /sbin/losetup -d /dev/loop0 && umount $BX_FILES ;;
	esac
}
# bx_strace TABLE DOMID WL: one more pass of WL on blkbackd, after the
# table's rounds and never counted in them (strace slows every system
# call down), with "strace -f -c" on all of blkbackd's threads; its
# summary as "@@SC ID LINE", the guest's requests in that pass as the
# run's "@@R ID".  ID = TABLE:strace:blkbackd:WL
bx_strace() {
	local id=$1:strace:blkbackd:$3 sp rc
	BX_CUR=blkbackd
	rm -f /tmp/bx-strace.txt
	strace -f -c -q -p "$(cat $BB_PID)" -o /tmp/bx-strace.txt &
	sp=$!
	sleep 3	# every thread attached
	bx_cmd $id 900 run $(bx_vdev blkbackd) $3; rc=$?
	kill -INT $sp
	wait $sp
	sed "s/^/@@SC $id /" /tmp/bx-strace.txt
	[ $rc = 0 ] && [ -s /tmp/bx-strace.txt ]
}
# ---- make bench-xen BX_TRACE=N: where the time goes, per request ----
# (issue #28 item 2) After the block table's rounds, N pairs of passes of
# the guest's rr1t (fio randread 4 KiB QD1, rr1 with p90 as well), one on
# blkbackd (/dev/ram0, script=block-blkbackd) and one on kernel
# xen-blkback (phy:/dev/ram1), the pair's order alternating; each pass is
# traced by dom0's ftrace for BX_TRACE_SECS (default 2) seconds of
# fio's steady state (from 1.5 s after its ramp).  Events: the interrupt handlers
# (the event channels' upcalls: "blkif-backend" for xen-blkback,
# "evtchn:blkbackd" for /dev/xen/evtchn), the scheduler's
# waking/wakeup/switch, the backend's system calls (raw_syscalls, for
# blkbackd's threads only), the bios queued on the RAM disk, Xen's
# multicalls (xen_mc_entry: one hypercall each batch, op = hypercall),
# the page faults, the PV MMU's hooks (xen/*: the page-table updates and
# TLB flushes that become hypercalls in a PV dom0),
# and the function tracer on the few kernel functions a request passes
# that end in a hypercall or mark a step (BX_TRACE_FUNCS; those the
# kernel cannot trace are skipped, and said).  trace_clock "mono"
# (ktime_get_mono_fast_ns: the one clocksource every vCPU reads, so an
# interrupt on one vCPU and the thread it wakes on the other are on one
# time line; printed to the microsecond).  The raw trace goes to the
# console as "@@FT ID BASE64" lines (gzip; tests/xen/bench-xen-lat.py
# reads them back, with "@@FM ID KEY=VALUE" lines that say what was
# traced), its md5 as "@@FE ID MD5 LINES": a console that dropped a
# character is seen, not trusted.
TR=/sys/kernel/tracing
BX_TRACE_FUNCS="brd_submit_bio bio_endio notify_remote_via_irq notify_remote_via_evtchn
	gnttab_map_refs gnttab_unmap_refs gnttab_batch_copy gnttab_batch_map
	evtchn_ioctl evtchn_write evtchn_interrupt gntdev_ioctl gntdev_mmap
	xen_blkif_be_int xen_irq_lateeoi privcmd_ioctl
	io_issue_sqe io_submit_sqes io_req_task_complete io_cqring_wait
	aio_read aio_complete_rw"
bx_tr() { # FILE VALUE: write VALUE to the tracefs file, or say why not
	echo "$2" > $TR/$1 2>/dev/null || { say "ftrace: cannot write '$2' to $1"; return 1; }
}
bx_trace_setup() { # ID LABEL: arm (not start) the trace of one pass
	local f e n=0 ok='' pids='' t filt=''
	[ -d $TR/events ] || mount -t tracefs nodev $TR || { say "no tracefs"; return 1; }
	bx_tr tracing_on 0
	bx_tr current_tracer nop
	bx_tr trace_clock mono || return 1
	bx_tr buffer_size_kb 16384 || bx_tr buffer_size_kb 4096 || return 1
	bx_tr set_event ""
	: > $TR/trace
	for e in irq/irq_handler_entry irq/irq_handler_exit sched/sched_waking sched/sched_wakeup \
		sched/sched_switch block/block_bio_queue xen exceptions/page_fault_user \
		exceptions/page_fault_kernel; do
		bx_tr events/$e/enable 1 || say "ftrace: no event $e"
	done
	if [ $2 = blkbackd ]; then
		# the daemon's system calls, its threads only
		for t in /proc/$(cat $BB_PID)/task/*; do
			pids="$pids ${t##*/}"
			filt="${filt:+$filt || }common_pid == ${t##*/}"
		done
		bx_tr events/raw_syscalls/sys_enter/filter "$filt" &&
			bx_tr events/raw_syscalls/sys_exit/filter "$filt" &&
			bx_tr events/raw_syscalls/sys_enter/enable 1 &&
			bx_tr events/raw_syscalls/sys_exit/enable 1 || return 1
	else
		pids=$(bx_pids $2)
	fi
	: > $TR/set_ftrace_filter
	for f in $BX_TRACE_FUNCS; do
		if echo "$f" >> $TR/set_ftrace_filter 2>/dev/null; then ok="$ok $f"; n=$((n + 1)); fi
	done
	# (an empty filter would trace every function in the kernel)
	if [ $n -gt 0 ]; then bx_tr current_tracer function || return 1; fi
	echo "@@FM $1 trace_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $TR/trace_clock) clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
		"kernel=$(uname -r) buffer_kb=$(cat $TR/buffer_size_kb) funcs=$(echo $ok | tr ' ' ,)"
	echo "@@FM $1 clocks=$(cat $TR/trace_clock | tr ' ' ,)"
	echo "@@FM $1 backend=$2 target=$(bx_target $BX_TABLE $2) dev=$($G/stat -L -c %t:%T $(bx_target $BX_TABLE $2) 2>/dev/null) pids=$(echo $pids | tr ' ' ,)"
	for t in $pids; do echo "@@FM $1 task $t $(cat /proc/$t/comm 2>/dev/null || cat /proc/*/task/$t/comm 2>/dev/null | head -1)"; done
	if [ $2 = blkbackd ]; then
		echo "@@FM $1 fds $(ls -l /proc/$(cat $BB_PID)/fd | sed -n 's/.* \([0-9]*\) -> /\1=/p' | tr ' \n' '_ ')"
	fi
	grep -E 'blkif|evtchn:' /proc/interrupts | awk -v id=$1 '{ printf "@@FM %s irq %s %s\n", id, $1, $NF }'
}
bx_trace_dump() { # ID: the trace, compressed, on the console
	local f=/tmp/bx-trace-$1 n
	f=$(echo "$f" | tr : -)
	bx_tr tracing_on 0
	echo "@@FM $1 overrun=$(awk '/^overrun:/ { s += $2 } END { print s + 0 }' $TR/per_cpu/cpu*/stats) dropped=$(awk '/^dropped events:/ { s += $3 } END { print s + 0 }' $TR/per_cpu/cpu*/stats)"
	# "  TASK-PID [CPU] FLAGS SECS.USECS: EVENT: ..." -> "PID CPU USECS EVENT: ..."
	sed -n -E 's/^ *.*-([0-9]+) +\[([0-9]+)\] [^ ]+ +([0-9]+)\.([0-9]+): /\1 \2 \3\4 /p' $TR/trace > $f
	n=$(wc -l < $f)
	gzip -9 < $f > $f.gz
	base64 < $f.gz | sed "s/^/@@FT $1 /"
	echo "@@FE $1 $(md5sum < $f.gz | cut -d' ' -f1) $n"
	rm -f $f $f.gz
	bx_tr current_tracer nop
	bx_tr set_event ""
	bx_tr events/raw_syscalls/sys_enter/filter 0
	bx_tr events/raw_syscalls/sys_exit/filter 0
	: > $TR/set_ftrace_filter
	: > $TR/trace
	[ "$n" -gt 0 ]
}
# Xen's side, for 1 s starting 1 s before the ftrace window (its own
# start, an exec, stays out of ftrace's window): xentrace records every hypercall of
# every PV vCPU (TRC_PV_HYPERCALL_V2: its op and, for grant_table_op,
# sched_op and vcpu_op, its command) and the scheduler's switches (which
# domain runs where), timestamped by the TSC: "@@XT ID BASE64" (gzip),
# "@@XE ID MD5 BYTES", "@@FM ID xentrace ..."
XENTRACE=/usr/lib/xen-4.17/bin/xentrace
BX_XT_PID=
bx_xentrace_start() { # SECONDS
	BX_XT_PID=
	[ -x $XENTRACE ] || { say "no xentrace in dom0: no hypercall counts"; return 0; }
	rm -f /tmp/bx-xt.bin
	# mask: classes PV (0x0020) and SCHED (0x0002), every subclass
	$XENTRACE -D -S 256 -e 0x0022f000 -T "$1" /tmp/bx-xt.bin > /tmp/bx-xt.err 2>&1 &
	BX_XT_PID=$!
}
bx_xentrace_dump() { # ID
	local rc=0
	[ -n "$BX_XT_PID" ] || return 0
	wait $BX_XT_PID || rc=$?
	echo "@@FM $1 xentrace rc=$rc bytes=$($G/stat -c %s /tmp/bx-xt.bin 2>/dev/null) $(tr '\n' ' ' < /tmp/bx-xt.err | cut -c1-200)"
	[ -s /tmp/bx-xt.bin ] || return 0
	gzip -9 < /tmp/bx-xt.bin > /tmp/bx-xt.bin.gz
	base64 < /tmp/bx-xt.bin.gz | sed "s/^/@@XT $1 /"
	echo "@@XE $1 $(md5sum < /tmp/bx-xt.bin.gz | cut -d' ' -f1) $($G/stat -c %s /tmp/bx-xt.bin)"
	rm -f /tmp/bx-xt.bin /tmp/bx-xt.bin.gz
}
# bx_lat TABLE DOMID LABEL N: one traced pass; the guest's numbers as the
# run's "@@R TABLE:lat:LABEL:N"
bx_lat() {
	local id=$1:lat:$3:$4 cp rc secs pids
	secs=$(arg xt.bx_trace_secs)
	BX_CUR=$3
	bx_attach $1:lat$4 $3 $2 || return 1
	bx_trace_setup $id $3 || { bx_detach $1:lat$4 $3 $2; return 1; }
	echo "@@FM $id domid=$2"
	pids=$(bx_pids $3)
	touch $HEALTH.pause
	# (BX_POLL: no "xl domid" while it waits, an exec that costs dom0
	# ~0.2 s of CPU here and would land in the window)
	BX_POLL=30 BX_PIDS=$pids bx_cmd $id 600 run $(bx_vdev $3) rr1t &
	cp=$!
	sleep $(($(arg xt.bx_ramp) + 1))
	# xentrace first (its start, an exec in a PV dom0, is expensive),
	# then the ftrace window
	bx_xentrace_start 1
	sleep 1.5
	bx_tr tracing_on 1
	sleep ${secs:-2}
	bx_tr tracing_on 0
	rm -f $HEALTH.pause
	wait $cp; rc=$?
	bx_xentrace_dump $id || rc=1
	bx_trace_dump $id || rc=1
	bx_detach $1:lat$4 $3 $2 || rc=1
	return $rc
}
# bx_table TABLE ROUNDS: one table's guest, its rounds, its teardown
bx_table() {
	local t=$1 rounds=$2 r label wl dom l
	BX_TABLE=$t
	BX_DOM=domu-bx-$t
	mark BENCH table $t
	check bx-$t-backings bx_backings_up $t || return
	# xt.bx_blkfront=P=V,P=V: xen-blkfront parameters for the guest
	l=$(arg xt.bx_blkfront | tr ',' '\n' | sed -n 's/^./xen_blkfront.&/p' | tr '\n' ' ')
	GUEST_MEM=512 GUEST_RAMDISK=/boot/domu-bench.cpio \
		XT_EXTRA="xt.bx_mib=$(arg xt.bx_mib) xt.bx_fio=$(arg xt.bx_fio) xt.bx_ramp=$(arg xt.bx_ramp) $l" \
		mkcfg $BX_DOM rpc "" "format=raw, vdev=xvdc, access=rw, backendtype=qdisk, target=$(bx_target $t qdisk)"
	check bx-$t-xl-create xl_create $BX_DOM || return
	dom=$(xl domid $BX_DOM)
	check bx-$t-qdisk-qemu bx_qemu $dom
	if check bx-$t-ready bx_ready $dom; then
		bx_params $t:0 qdisk $dom
		for r in $(seq 1 $rounds); do
			echo "@@O $t $r $(bx_order $r)"
			for label in $(bx_order $r); do
				BX_CUR=$label
				mark BENCH $t round $r $label
				check bx-$t-$r-$label-attach bx_attach $t:$r $label $dom || break 2
				[ $label != blkbackd ] || bx_bbstats $t:$r:$label:attach
				for wl in $BX_WL; do
					check bx-$t-$r-$label-$wl bx_cmd $t:$r:$label:$wl 600 run $(bx_vdev $label) $wl
					[ $label != blkbackd ] || bx_bbstats $t:$r:$label:$wl
				done
				check bx-$t-$r-$label-detach bx_detach $t:$r $label $dom || break 2
			done
		done
		# where blkbackd's time goes: system calls per request (item 2 of
		# issue #28), on the block-device path only, untimed
		if [ $t = block ] && [ -n "$BX_STRACE" ] && [ -x /usr/bin/strace ] &&
		   check bx-$t-strace-attach bx_attach $t:strace blkbackd $dom; then
			for wl in $BX_STRACE; do
				check bx-$t-strace-$wl bx_strace $t $dom $wl
			done
			check bx-$t-strace-detach bx_detach $t:strace blkbackd $dom
		fi
		# where the time goes per request: ftrace, both backends (make
		# bench-xen BX_TRACE=N: N pairs, the order alternating)
		if [ $t = block ] && [ "$(arg xt.bx_trace)" -gt 0 ] 2>/dev/null; then
			for r in $(seq 1 "$(arg xt.bx_trace)"); do
				if [ $((r % 2)) = 1 ]; then l="blkbackd blkback"; else l="blkback blkbackd"; fi
				for label in $l; do
					check bx-$t-lat-$label-$r bx_lat $t $dom $label $r
				done
			done
		fi
		printf 'end x x\n' > "$BX_TTY"
		wait_guest $BX_DOM '@@U BX-END' 30
	fi
	health_forget qdisk-qemu
	xl destroy $BX_DOM 2>/dev/null
	bb_alive && { health_forget blkbackd; bb_stop; }
	lsmod | grep -q '^xen_blkback ' && rmmod xen_blkback
	sleep 2	# QEMU lets go of the qdisk backing
	check bx-$t-backings-down bx_backings_down $t
}
phase_bench() {
	local rounds t tables
	rounds=$(arg xt.rounds)
	: ${rounds:=5}
	BX_STRACE=$(arg xt.bx_strace | tr , ' ')	# "-": none
	[ "$BX_STRACE" != - ] || BX_STRACE=
	[ -x /usr/bin/strace ] || [ -z "$BX_STRACE" ] || say "no strace in dom0: no system call pass"
	BX_DISK_MIB=$(arg xt.bx_disk_mib)
	: ${BX_DISK_MIB:=256}
	BB_DEBUG=	# the daemon as it runs in production: no trace, no -v
	# which blkbackd this is (the build's git revision; bench-xen.sh adds
	# its ELF build id)
	echo "@@V $($BB --version 2>&1 | head -1)"
	rm -f $BX_FIFO
	start bx-setup
	if [ -x /usr/libexec/xen-qemu-system-i386 ] && [ -s /boot/domu-bench.cpio ] &&
	   [ -s /modules-brd.list ] && mkfifo $BX_FIFO; then
		exec 3<>$BX_FIFO
		result bx-setup PASS
	else
		result bx-setup FAIL "qemu, /boot/domu-bench.cpio, brd.ko or the FIFO missing"
		return
	fi
	health_start
	tables=$(arg xt.bx_tables | tr , ' ')
	for t in ${tables:-block file}; do
		bx_table $t $rounds
	done
	rm -f $BX_FIFO
	exec 3<&-
	health_stop
}

# ---------------- health: dom0's daemons while the bench runs ----------
# health_loop checks every 5 s that each process in $HEALTH.expect ("NAME
# PID" lines: xenstored, xenconsoled, blkbackd while it should run, the
# qdisk QEMU) is alive, and that dom0's kernel has logged no crash (a
# segfault or trap of any process, the OOM killer, a BUG or WARNING).
# Each finding is an "@@H ..." line; health_stop prints "@@H SUMMARY ..."
# and the step bx-health fails on any finding.
HEALTH=/tmp/health
HEALTH_KRE='segfault at|general protection|traps:|Out of memory|Killed process|BUG:|WARNING:|Oops'
health_watch() { # NAME PID
	{ grep -v "^$1 " $HEALTH.expect 2>/dev/null; echo "$1 $2"; } > $HEALTH.tmp
	mv $HEALTH.tmp $HEALTH.expect
}
health_forget() { # NAME: stopped on purpose from now on
	grep -v "^$1 " $HEALTH.expect > $HEALTH.tmp 2>/dev/null
	mv $HEALTH.tmp $HEALTH.expect
}
health_loop() {
	local n=0 name pid k0 k
	k0=$(dmesg | grep -cE "$HEALTH_KRE")
	while [ -e $HEALTH.on ]; do
		# (a traced pass, bx_lat, pauses the watch: its dmesg | grep
		# costs dom0 ~1 s of CPU under TCG and would land in the window)
		if [ -e $HEALTH.pause ]; then sleep 1; continue; fi
		while read -r name pid; do
			kill -0 "$pid" 2>/dev/null && continue
			# still expected (read again: it may have been stopped on purpose since)
			grep -qx "$name $pid" $HEALTH.expect || continue
			grep -qx "$name $pid" $HEALTH.dead 2>/dev/null && continue
			echo "$name $pid" >> $HEALTH.dead
			echo "@@H DEAD $(now) $name pid $pid"
		done < $HEALTH.expect
		k=$(dmesg | grep -cE "$HEALTH_KRE")
		if [ "$k" -gt "$k0" ]; then
			dmesg | grep -E "$HEALTH_KRE" | tail -n $((k - k0)) | while IFS= read -r l; do
				echo "@@H KERNEL $l"
				echo "$l" >> $HEALTH.kernel
			done
			k0=$k
		fi
		n=$((n + 1))
		echo $n > $HEALTH.count
		sleep 5
	done
}
health_start() {
	rm -f $HEALTH.*
	: > $HEALTH.expect
	health_watch xenstored "$(cat /run/xenstored.pid)"
	health_watch xenconsoled "$(cat /run/xenconsoled.pid)"
	touch $HEALTH.on
	health_loop &
	HEALTH_PID=$!
}
health_stop() {
	local dead kern
	rm -f $HEALTH.on
	wait $HEALTH_PID
	start bx-health
	dead=$(cat $HEALTH.dead 2>/dev/null | tr '\n' ',')
	kern=$(cat $HEALTH.kernel 2>/dev/null | wc -l)
	echo "@@H SUMMARY checks=$(cat $HEALTH.count 2>/dev/null || echo 0) dead=${dead:-none} kernel=$kern watched=$(cut -d' ' -f1 $HEALTH.expect | tr '\n' ',')"
	if [ -z "$dead" ] && [ "$kern" = 0 ]; then
		result bx-health PASS
	else
		result bx-health FAIL "died: ${dead:-none}; kernel crash lines: $kern"
	fi
}

# ---------------- between phases ----------------
# /tmp is a tmpfs (half of dom0's 1 GiB) and every phase's backings are
# sparse files on it, filled as the guests write: six phases' images
# left in place filled it, and lw (which copies 64 MiB logs and images
# there) then failed every round with "No space left on device".  So
# when a phase ends, however it ended, whatever it left goes: its guests
# (destroyed, said), a blkbackd still running (stopped, said), loop
# devices over its images, the images (mkimg listed them) and
# blkbackd's trace; the next phase starts on an empty /tmp and depends
# on nothing another phase left.  "@@M ... PHASE-END-P" says what /tmp
# held before and after, and dom0's free memory.
tmp_used() { df -k /tmp | awk 'NR == 2 { print int($3 / 1024) }'; }
phase_end() { # PHASE
	local d l img before
	before=$(tmp_used)
	for d in $(xl list 2>/dev/null | awk 'NR > 2 { print $1 }'); do
		say "phase $1 left guest $d: xl destroy"
		xl destroy "$d"
	done
	if bb_alive; then
		say "phase $1 left blkbackd running: stopping it"
		bb_stop
	fi
	if [ -s $PHASE_IMGS ]; then
		while read -r img; do
			for l in $(/sbin/losetup -j "$img" 2>/dev/null | cut -d: -f1); do
				/sbin/losetup -d "$l" || say "losetup -d $l ($img) failed"
			done
			rm -f "$img"
		done < $PHASE_IMGS
	fi
	: > $PHASE_IMGS
	rm -f $BB_TRACE
	mark "PHASE-END-$1 tmp_used_mib=$before->$(tmp_used) mem_available_mib=$(free -m | awk '/^Mem:/ { print $7 }')"
}

for p in $(echo "$PHASES" | tr ',' ' '); do
	mark PHASE-$p
	case $p in
	bb|pg|bar|rs|co|qc|cmd|bench)
		if [ ! -x $BB ]; then
			echo "@@SKIPALL $p- blkbackd is not built (backend/blkbackd)"
			[ $p = bb ] && echo "@@SKIPALL ht- blkbackd is not built (backend/blkbackd)"
			[ $p = bb ] && echo "@@SKIPALL ro- blkbackd is not built (backend/blkbackd)"
		elif [ ! -x /etc/xen/scripts/block-blkbackd ]; then
			echo "@@SKIPALL $p- the hotplug script backend/block-blkbackd is missing"
			[ $p = bb ] && echo "@@SKIPALL ht- the hotplug script backend/block-blkbackd is missing"
			[ $p = bb ] && echo "@@SKIPALL ro- the hotplug script backend/block-blkbackd is missing"
		else
			phase_$p
		fi
		;;
	cmp) phase_cmp ;;
	lw) if [ ! -x $BB ]; then echo "@@SKIPALL lw- blkbackd is not built"; else phase_lw; fi ;;
	jobs)
		if grep -q ' domU ' /xt/jobs && { [ ! -x $BB ] || [ ! -x /etc/xen/scripts/block-blkbackd ]; }; then
			echo "@@SKIPALL jobs blkbackd or its hotplug script is not built"
		else
			phase_jobs
		fi
		;;
	*) say "unknown phase $p" ;;
	esac
	phase_end $p
done
sleep 2	# let the relays flush the guests' last lines
mark ALL-DONE
sync
poweroff -f
