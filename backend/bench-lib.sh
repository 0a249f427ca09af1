# SPDX-License-Identifier: GPL-2.0-or-later
# bench-lib.sh: sourced by bench.sh (val, median), bench-rbd.sh and
# bench-nbd.sh (all).  For rounds, the caller defines ring NAME RW BS QD
# MAX-INDIRECT [ring|ring-inplace] and fiorun NAME RW BS QD, printing one
# key=value line per run, and sets $repeat.

val() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" <<< "$1"; }
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

# rounds STORE NAME KEY GOAL: $repeat rounds of the three contenders, the
# first of each round rotating (ring, ring-inplace, fio; then
# ring-inplace, fio, ring; ...), over the caller's arrays ra (ring's
# arguments) and fa (fiorun's); each run printed, then the ratios of the
# medians of KEY: ring/fio against GOAL, ring-inplace/fio beside it
rounds() {
	local store=$1 name=$2 key=$3 goal=$4 i c l rv=() cv=() fv=()
	local -a order=(ring ring-inplace fio)
	for (( i=0; i<repeat * 3; i++ )); do
		c=${order[(i / 3 + i % 3) % 3]}
		case $c in
		ring) l=$(ring "${ra[@]}" ring); rv+=("$(val "$l" "$key")") ;;
		ring-inplace) l=$(ring "${ra[@]}" ring-inplace); cv+=("$(val "$l" "$key")") ;;
		fio) l=$(fiorun "${fa[@]}"); fv+=("$(val "$l" "$key")") ;;
		esac
		echo "$l"
	done
	local rm cm fm
	rm=$(median "${rv[@]}") cm=$(median "${cv[@]}") fm=$(median "${fv[@]}")
	echo "ratio $store-$name $key ring/fio = $(python3 -c "print(round($rm/$fm,3))")" \
		"(medians $rm / $fm over $repeat runs each; goal >= $goal)"
	echo "ratio $store-$name $key ring-inplace/fio = $(python3 -c "print(round($cm/$fm,3))")" \
		"(medians $cm / $fm; without the frontend's copy)"
}
