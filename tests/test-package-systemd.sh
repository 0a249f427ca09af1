#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd unit under a real systemd: debootstrap a Debian 12 root with
# systemd, boot that systemd as PID 1 of a new PID and mount namespace,
# apt-get install the two .deb files test-package-deb built, and point
# blkbackd.service at xensim (a drop-in: no /proc/xen condition, the
# unit's own ExecStart plus --transport=sim, and the Xen paths for the
# recovery records and the control socket; xensim.service before it).
# Then, each step failing with its own message:
#  1. systemctl start: active (Type=notify: READY=1 came), a vbd served
#     (blkfront-test xl-add + verify);
#  2. systemctl kill -s KILL during a guest's verify: systemd restarts it,
#     the new blkbackd takes the vbd over from its recovery record, the
#     guest's verify ends ok;
#  3. systemctl stop + start during another guest's verify: the disk is
#     kept, the verify ends ok;
#  4. blkbackd-ctl upgrade: still active, same MainPID, a verify after it;
#  5. an error (a vbd whose file is missing) is at priority err in the
#     journal (journalctl -p err -u blkbackd), the info lines are not;
#  6. blkbackd-ctl status as root; with --ctl-group from
#     /etc/default/blkbackd the socket is root:GROUP 0660 and a member of
#     the group (not root) gets the status.
# Not in "make check" (minutes, a mirror, root): "make check-systemd".
# Skips (77, saying why) only when it cannot run here: not root, no
# debootstrap or unshare/nsenter, no mirror, no .deb files, no namespaces,
# or a host that runs systemd itself.
. ./functions.sh
. "$abs_top_srcdir/tests/package-lib.sh"
requires_root
requires command -v debootstrap
requires command -v unshare
requires command -v nsenter
debs=$(ls package-debs/blkbackd_*.deb package-debs/blkbackd-tools_*.deb 2>/dev/null) || true
[ "$(echo "$debs" | grep -c .)" = 2 ] ||
	{ echo "$0: skipped: no packages built (run test-package-deb.sh first)"; exit 77; }


# The booted systemd shares the host's /sys, cgroups included: where
# systemd already runs the host, a second one would manage the same tree.
[ ! -d /run/systemd/system ] ||
	{ echo "$0: skipped: the host runs systemd: a second one would share its cgroup tree"; exit 77; }
# (unshare -p: refused in some containers; that is "cannot run here")
unshare --pid --fork --mount true 2>/dev/null ||
	{ echo "$0: skipped: unshare --pid --mount refused here"; exit 77; }

step() { echo "== $*"; }
root=$(mktemp -d /var/tmp/package-systemd.XXXXXX)
cleanup_fn rm -rf --one-file-system "$root"
# not 0700 as mktemp made it: the root's "/" must let non-root users in
chmod 755 "$root"
step "debootstrap bookworm (systemd)"
debian_root "$root" --include=systemd,systemd-sysv,dbus
# not /tmp: systemd-tmpfiles empties it at boot
mkdir -p "$root/var/cache/blkbackd-debs"
cp $debs "$root/var/cache/blkbackd-debs/"

# Boot: systemd as PID 1 of new PID and mount namespaces.  The root is
# bind-mounted on itself first: systemd sets up a unit's mount namespace
# (ProtectSystem=, PrivateMounts=...) by moving the root, which fails
# (226/NAMESPACE, EINVAL) when "/" is not a mount point.  Killing that
# PID 1 ends the namespaces and everything in them, mounts included.
step "booting systemd in new PID and mount namespaces"
boot_log=$root.boot.log
cleanup_fn rm -f "$boot_log"
unshare --pid --fork --mount --propagation private sh -c '
	mount --bind "$1" "$1" && mount -t proc proc "$1/proc" &&
	mount --rbind /sys "$1/sys" && mount --rbind /dev "$1/dev" &&
	mount -t tmpfs -o mode=755 tmpfs "$1/run" &&
	exec chroot "$1" /lib/systemd/systemd --system' sh "$root" >"$boot_log" 2>&1 </dev/null &
unshare_pid=$!
sd=
teardown() {
	[ -n "$sd" ] && kill -KILL "$sd" 2>/dev/null
	kill -KILL "$unshare_pid" 2>/dev/null
	wait "$unshare_pid" 2>/dev/null
}
cleanup_fn teardown
wait_for 60 eval 'sd=$(pgrep -P '"$unshare_pid"' -x systemd)' ||
	{ tail -n 20 "$boot_log"; fail "no systemd under unshare (pid $unshare_pid) after 60 s (its output above)"; }

# in_root CMD...: run CMD inside (its namespaces and root), a clean env
in_root() {
	nsenter -t "$sd" -m -p -r -w env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}
# a guest's environment: xensim's directory and dom0's xenstore in it
SIMENV=(XENSIM_DIR=/run/xensim XENSTORED_PATH=/run/xensim/xenstore.sock)
in_sim() { in_root env "${SIMENV[@]}" "$@"; }
prop() { in_root systemctl show -P "$2" "$1" 2>/dev/null; }	# prop UNIT PROPERTY
# wait_prop SECS UNIT PROP VALUE: poll every 0.2 s
wait_prop() {
	local end=$(( $(date +%s) + $1 ))
	until [ "$(prop "$2" "$3")" = "$4" ]; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}
journal() { in_root journalctl --no-pager -o cat "$@"; }
say_unit() {	# the unit's state and log, for a failure message
	in_root systemctl status --no-pager "$1" 2>&1 | head -n 12
	journal -u "$1" | tail -n 25
}

# systemd answers once its manager is up (the boot goes on meanwhile;
# dbus, systemd-logind and e2scrub_reap do not start here: not ours)
wait_prop 120 basic.target ActiveState active ||
	{ tail -n 20 "$boot_log"; fail "systemd in the namespace did not reach basic.target in 120 s"; }
echo "systemd $(in_root systemctl --version | sed -n '1s/^systemd //p') is PID 1 (host pid $sd)"

step "apt-get install the packages"
in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends /var/cache/blkbackd-debs/*.deb' >"$root.install.log" 2>&1 ||
	{ tail -n 30 "$root.install.log"; rm -f "$root.install.log"; fail "apt-get install of the packages failed (above)"; }
rm -f "$root.install.log"
[ "$(prop blkbackd UnitFileState)" = enabled ] || fail "blkbackd.service is not enabled after install"
# no /proc/xen here: the unit is skipped, not failed
[ "$(prop blkbackd ActiveState)" = inactive ] && [ "$(prop blkbackd ConditionResult)" = no ] ||
	{ say_unit blkbackd; fail "blkbackd.service on a machine without Xen: not skipped by its condition"; }
for x in /usr/bin/xensim /usr/bin/xensim-ctl /usr/bin/blkfront-test /usr/sbin/blkbackd-ctl; do
	in_root test -x "$x" || fail "$x not installed"
done

# The simulator instead of Xen.  The drop-in keeps the unit's ExecStart
# and adds the transport; the state directory and the control socket are
# the Xen defaults (under the simulator they would be beside xensim's
# socket), so that what the unit does to /run/blkbackd is what is tested.
unit=$root/lib/systemd/system/blkbackd.service
exec_start=$(sed -n 's|^ExecStart=\(.*\)\$BLKBACKD_OPTS$|\1|p' "$unit")
[ -n "$exec_start" ] || fail "no ExecStart=... \$BLKBACKD_OPTS in the installed unit"
cat > "$root/etc/systemd/system/xensim.service" <<'EOF'
[Unit]
Description=xensim, the simulated Xen of blkbackd's test

[Service]
Type=forking
PIDFile=/run/xensim.pid
ExecStart=/usr/bin/xensim --dir /run/xensim --daemon --pidfile /run/xensim.pid
EOF
mkdir -p "$root/etc/systemd/system/blkbackd.service.d"
cat > "$root/etc/systemd/system/blkbackd.service.d/sim.conf" <<EOF
[Unit]
ConditionPathExists=
Wants=xensim.service
After=xensim.service

[Service]
ExecStart=
ExecStart=${exec_start}--transport=sim --sim-dir=/run/xensim --state-dir=/run/blkbackd --ctl-socket=/run/blkbackd/ctl.sock \$BLKBACKD_OPTS
EOF
in_root systemctl daemon-reload
in_root mkdir -p /srv/guests

# new_guest NAME: a domain with an 16 MiB disk on xvda; prints its domid
new_guest() {
	local d
	d=$(in_sim xensim-ctl create-domain "$1") || fail "xensim-ctl create-domain $1"
	in_root truncate -s 16M "/srv/guests/$1.img"
	in_sim blkfront-test xl-add --domid "$d" --params "/srv/guests/$1.img" >/dev/null ||
		fail "blkfront-test xl-add for $1 (domain $d)"
	echo "$d"
}
verify_once() {	# verify_once DOMID WHAT: a verify that must pass
	local out
	out=$(in_sim blkfront-test verify --domid "$1" --size 8M --bs 64k --timeout 60000 2>&1) ||
		{ say_unit blkbackd; fail "$2: blkfront-test verify failed: $out"; }
	grep -q '^verify: ok: .* blocks of 65536 bytes read back' <<<"$out" ||
		fail "$2: no \"verify: ok\" from blkfront-test: $out"
	echo "$2: $out"
}
# A guest that goes on writing and checking across what the daemon goes
# through: a transient unit (kept after its end: -r) whose count outlasts
# the test; SIGTERM then ends it the normal way (no new writes, read the
# whole region back), and it must end "verify: ok" with status 0.
guest_start() {	# guest_start UNIT DOMID
	in_root systemd-run -q -r --unit="$1" -E XENSIM_DIR=/run/xensim \
		blkfront-test verify --domid "$2" --size 8M --bs 4k --count 1000000000 --timeout 120000 ||
		fail "systemd-run of $1"
	wait_prop 60 "$1" SubState running || { say_unit "$1"; fail "$1 did not run"; }
}
# the daemon's write counter of a vbd (blkbackd-ctl stats), 0 if none
writes_of() {
	in_root blkbackd-ctl stats 2>/dev/null | awk -v v="$1/51712" '$1 == v { print $3 }' | grep . || echo 0
}
# wait_writes SECS VBD N: until the daemon has acknowledged more than N
# writes of the vbd, i.e. the guest's I/O goes through it
wait_writes() {
	local end=$(( $(date +%s) + $1 ))
	until [ "$(writes_of "$2")" -gt "$3" ]; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}
guest_end() {	# guest_end UNIT WHAT: SIGTERM, then it must have ended ok
	local out
	in_root systemctl kill -s TERM "$1"
	wait_prop 60 "$1" SubState exited ||
		{ say_unit "$1"; fail "$2: $1 (verify) did not end within 60 s of SIGTERM"; }
	out=$(journal -u "$1" | grep '^verify: ' || true)
	[ "$(prop "$1" ExecMainStatus)" = 0 ] && [ "$(prop "$1" Result)" = success ] ||
		{ say_unit "$1"; fail "$2: the guest's verify failed (status $(prop "$1" ExecMainStatus)): $out"; }
	grep -q '^verify: ok: ' <<<"$out" || fail "$2: no \"verify: ok\" from the guest: $out"
	echo "$2: $1: $out"
}

step "1. systemctl start blkbackd (Type=$(sed -n 's/^Type=//p' "$unit"))"
in_root systemctl start blkbackd || { say_unit blkbackd; fail "1: systemctl start blkbackd failed"; }
[ "$(prop blkbackd ActiveState)" = active ] || { say_unit blkbackd; fail "1: blkbackd not active after its start"; }
[ "$(prop xensim ActiveState)" = active ] || { say_unit xensim; fail "1: xensim.service not active"; }
# READY=1 carries STATUS=serving ... (a forking unit has no status text)
if grep -q '^Type=notify' "$unit"; then
	case $(prop blkbackd StatusText) in
	"serving "*) ;;
	*) fail "1: no STATUS from blkbackd's READY=1: \"$(prop blkbackd StatusText)\"" ;;
	esac
fi
pid1=$(prop blkbackd MainPID)
g1=$(new_guest g1)
verify_once "$g1" "1: guest $g1"

step "2. systemctl kill -s KILL blkbackd during a guest's verify"
g2=$(new_guest g2)
guest_start guest2 "$g2"
wait_writes 60 "$g2" 0 || { say_unit guest2; fail "2: no write of guest $g2 reached blkbackd in 60 s"; }
pid=$(prop blkbackd MainPID)
restarts=$(prop blkbackd NRestarts)
in_root test -e "/run/blkbackd/vbd-$g2-51712-q0" ||
	fail "2: no recovery record /run/blkbackd/vbd-$g2-51712-q0: $(in_root ls -l /run/blkbackd)"
in_root systemctl kill -s KILL blkbackd
end=$(( $(date +%s) + 60 ))
until [ "$(prop blkbackd NRestarts)" -gt "$restarts" ] && [ "$(prop blkbackd ActiveState)" = active ]; do
	[ "$(date +%s)" -lt "$end" ] ||
		{ say_unit blkbackd; fail "2: blkbackd not restarted (and active) by systemd within 60 s of SIGKILL"; }
	sleep 0.2
done
pid_new=$(prop blkbackd MainPID)
[ "$pid_new" != "$pid" ] && [ "$pid_new" != 0 ] || fail "2: MainPID $pid_new after the restart (was $pid)"
echo "2: restarted by systemd: pid $pid -> $pid_new, NRestarts $(prop blkbackd NRestarts)"
journal -u blkbackd _PID="$pid_new" | grep -q "^vbd $g2/51712: taken over, Connected as it was" ||
	{ say_unit blkbackd; fail "2: the restarted blkbackd did not take vbd $g2/51712 over (no \"taken over\" line)"; }
# the new daemon counts from 0: the guest's writes go through it
wait_writes 60 "$g2" 0 || { say_unit guest2; fail "2: no write of guest $g2 through the restarted blkbackd in 60 s"; }
guest_end guest2 "2"

step "3. systemctl stop, then start, during a guest's verify"
g3=$(new_guest g3)
guest_start guest3 "$g3"
wait_writes 60 "$g3" 0 || { say_unit guest3; fail "3: no write of guest $g3 reached blkbackd in 60 s"; }
in_root systemctl stop blkbackd || { say_unit blkbackd; fail "3: systemctl stop blkbackd failed"; }
[ "$(prop blkbackd ActiveState)" = inactive ] && [ "$(prop blkbackd Result)" = success ] ||
	{ say_unit blkbackd; fail "3: after systemctl stop: $(prop blkbackd ActiveState), result $(prop blkbackd Result)"; }
# the device stays attached: Connected in xenstore, not Closing
state=$(in_sim xenstore-read "/local/domain/0/backend/vbd/$g3/51712/state")
[ "$state" = 4 ] || fail "3: vbd $g3/51712 in state $state after the stop (4, Connected, expected)"
[ "$(prop guest3 SubState)" = running ] || { say_unit guest3; fail "3: the guest's verify ended while blkbackd was stopped"; }
in_root systemctl start blkbackd || { say_unit blkbackd; fail "3: systemctl start blkbackd (after the stop) failed"; }
pid3=$(prop blkbackd MainPID)
journal -u blkbackd _PID="$pid3" | grep -q "^vbd $g3/51712: taken over, Connected as it was" ||
	{ say_unit blkbackd; fail "3: the started blkbackd did not take vbd $g3/51712 over"; }
wait_writes 60 "$g3" 0 || { say_unit guest3; fail "3: no write of guest $g3 through the started blkbackd in 60 s"; }
guest_end guest3 "3"

step "4. blkbackd-ctl upgrade"
pid=$(prop blkbackd MainPID)
out=$(in_root blkbackd-ctl upgrade 2>&1) || { say_unit blkbackd; fail "4: blkbackd-ctl upgrade: $out"; }
echo "4: blkbackd-ctl upgrade: $out"
# after RELOADING=1, the exec'ed daemon's READY=1 makes it active again
wait_prop 60 blkbackd ActiveState active || { say_unit blkbackd; fail "4: not active again within 60 s of the upgrade"; }
wait_for 60 eval 'journal -u blkbackd _PID='"$pid"' | grep -q "after an upgrade$"' ||
	{ say_unit blkbackd; fail "4: no \"serving ... after an upgrade\" from pid $pid"; }
[ "$(prop blkbackd MainPID)" = "$pid" ] || fail "4: MainPID $(prop blkbackd MainPID) after the upgrade, was $pid"
[ "$(prop blkbackd SubState)" = running ] || fail "4: SubState $(prop blkbackd SubState) after the upgrade"
verify_once "$g1" "4: after the upgrade, guest $g1"

step "5. an error is at priority err in the journal"
gb=$(in_sim xensim-ctl create-domain bad) || fail "xensim-ctl create-domain bad"
in_sim blkfront-test xl-add --domid "$gb" --params /srv/guests/missing.img >/dev/null ||
	fail "5: blkfront-test xl-add for domain $gb"
wait_for 60 eval 'journal -p err -u blkbackd | grep -q "missing\.img"' ||
	{ say_unit blkbackd; fail "5: journalctl -p err -u blkbackd has no line about the missing /srv/guests/missing.img"; }
journal -p err -u blkbackd | grep "missing\.img"
# and the info lines are not errors
journal -p err -u blkbackd | grep -q '^serving /local' &&
	fail "5: blkbackd's info line \"serving ...\" is at priority err"
[ "$(prop blkbackd ActiveState)" = active ] || fail "5: blkbackd not active after a vbd's error"

step "6. blkbackd-ctl status; --ctl-group"
out=$(in_root blkbackd-ctl status 2>&1) || fail "6: blkbackd-ctl status as root: $out"
grep -q "^pid: $(prop blkbackd MainPID)$" <<<"$out" || fail "6: blkbackd-ctl status: $out"
in_root groupadd -r blkmon
in_root useradd -r -M -G blkmon blkmon1
in_root sed -i 's/^BLKBACKD_OPTS=.*/BLKBACKD_OPTS="--ctl-group=blkmon"/' /etc/default/blkbackd
in_root systemctl restart blkbackd ||
	{ say_unit blkbackd; fail "6: systemctl restart blkbackd with --ctl-group=blkmon failed"; }
[ "$(prop blkbackd ActiveState)" = active ] || { say_unit blkbackd; fail "6: not active with --ctl-group"; }
perm=$(in_root stat -c '%a %U:%G' /run/blkbackd/ctl.sock)
[ "$perm" = "660 root:blkmon" ] || fail "6: --ctl-group=blkmon: the control socket is $perm, not 660 root:blkmon"
out=$(in_root setpriv --reuid=blkmon1 --regid=blkmon1 --init-groups blkbackd-ctl status 2>&1) ||
	fail "6: blkbackd-ctl status as a member of blkmon: $out ($(in_root ls -ld /run/blkbackd))"
grep -q '^pid: ' <<<"$out" || fail "6: blkbackd-ctl status as a member of blkmon: $out"
out=$(in_root setpriv --reuid=blkmon1 --regid=blkmon1 --init-groups blkbackd-ctl upgrade 2>&1) &&
	fail "6: a member of blkmon could upgrade blkbackd: $out"
verify_once "$g1" "6: with --ctl-group, guest $g1"
echo "6: $perm, a member of blkmon gets the status"

step "the end: the unit stops cleanly"
in_root systemctl stop blkbackd xensim
[ "$(prop blkbackd Result)" = success ] || { say_unit blkbackd; fail "the final stop: result $(prop blkbackd Result)"; }
echo ok
