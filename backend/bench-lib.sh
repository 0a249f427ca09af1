# SPDX-License-Identifier: GPL-2.0-or-later
# bench-lib.sh: sourced by bench.sh (val, median, host_ticks,
# host_cost), bench-rbd.sh and bench-nbd.sh (all, per_req too).  For rounds, the
# caller defines ring NAME RW BS QD MAX-INDIRECT [ring|ring-inplace] and
# fiorun NAME RW BS QD, printing one key=value line per run with
# host_cost's two keys, and sets $repeat.

val() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" <<< "$1"; }
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

hz=$(getconf CLK_TCK)
# per_req T0 T1 IOS: microseconds per request between two readings of a
# process's CPU clock ticks (/proc/PID/stat's utime + stime)
per_req() { python3 -c "print(round(($2 - $1) * 1e6 / $hz / max($3, 1), 2))"; }
# host_ticks: "BUSY TOTAL" clock ticks of all CPUs so far (busy: user,
# nice, system, irq, softirq; total adds idle and iowait)
host_ticks() { awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8; print b, b + $5 + $6 }' /proc/stat; }
# host_cost T0 T1 IOS: "host_us_per_req=... host_busy_pct=...": what
# every process on the machine spent per request (the server's, the
# simulator's and the frontend's CPU included; the start and stop of the
# run too), and how busy the CPUs were (100: all of them)
host_cost() {
	python3 -c "import sys; b0, t0, b1, t1 = map(float, sys.argv[1:5]); n = max(int(sys.argv[5]), 1); hz = float(sys.argv[6])
print('host_us_per_req=%.2f host_busy_pct=%.0f' % ((b1 - b0) * 1e6 / hz / n, 100 * (b1 - b0) / max(t1 - t0, 1)))" $1 $2 "$3" "$hz"
}

# rounds STORE NAME KEY GOAL: $repeat rounds of the three contenders, the
# first of each round rotating (ring, ring-inplace, fio; then
# ring-inplace, fio, ring; ...), over the caller's arrays ra (ring's
# arguments) and fa (fiorun's); each run printed, then the ratios of the
# medians of KEY: ring/fio against GOAL, ring-inplace/fio beside it;
# then the machine's CPU per request (host_us_per_req): where fio's runs
# kept every CPU busy, ring/fio can be no better than fio's over ring's
# (and then paired: each round's ring/fio)
rounds() {
	local store=$1 name=$2 key=$3 goal=$4 i c l rv=() cv=() fv=() rh=() ch=() fh=() fb=()
	local -a order=(ring ring-inplace fio)
	for (( i=0; i<repeat * 3; i++ )); do
		c=${order[(i / 3 + i % 3) % 3]}
		case $c in
		ring) l=$(ring "${ra[@]}" ring); rv+=("$(val "$l" "$key")")
			rh+=("$(val "$l" host_us_per_req)") ;;
		ring-inplace) l=$(ring "${ra[@]}" ring-inplace); cv+=("$(val "$l" "$key")")
			ch+=("$(val "$l" host_us_per_req)") ;;
		fio) l=$(fiorun "${fa[@]}"); fv+=("$(val "$l" "$key")")
			fh+=("$(val "$l" host_us_per_req)") fb+=("$(val "$l" host_busy_pct)") ;;
		esac
		echo "$l"
	done
	local rm cm fm rhm chm fhm fbm
	rm=$(median "${rv[@]}") cm=$(median "${cv[@]}") fm=$(median "${fv[@]}")
	rhm=$(median "${rh[@]}") chm=$(median "${ch[@]}") fhm=$(median "${fh[@]}") fbm=$(median "${fb[@]}")
	echo "ratio $store-$name $key ring/fio = $(python3 -c "print(round($rm/$fm,3))")" \
		"(medians $rm / $fm over $repeat runs each; goal >= $goal)"
	echo "ratio $store-$name $key ring-inplace/fio = $(python3 -c "print(round($cm/$fm,3))")" \
		"(medians $cm / $fm; without the frontend's copy)"
	echo "  host CPU per request: ring $rhm us, ring-inplace $chm us, fio $fhm us" \
		"(fio kept the CPUs $fbm % busy; fio/ring $(python3 -c "print(round($fhm/max($rhm, 0.01),3))"))"
	paired "${rv[*]}" "${fv[*]}"
}

# paired "RING..." "FIO...": each round's ring/fio (the two ran within
# two runs of each other), their median and range.  Where the backing
# drifts over a row (an OSD slowing as writes land), the ratio of the
# medians compares runs made at different points of the drift; the
# rounds' own ratios do not.  Printed beside the medians' ratio, which
# stays the goal's figure.
paired() {
	python3 -c "import statistics, sys
r = [float(x) for x in sys.argv[1].split()]; f = [float(x) for x in sys.argv[2].split()]
q = [a / b for a, b in zip(r, f) if b > 0]
print('  ring/fio paired by round: median %.3f, range %.3f-%.3f (%s)' % (statistics.median(q),
      min(q), max(q), ' '.join('%.3f' % x for x in q)))" "$1" "$2"
}
