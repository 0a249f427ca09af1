#!/usr/bin/env bash
# hog-nbd.sh ROUNDS: is a third process on the two CPUs what the ring's
# nbd 4 KiB write loses?  fio's nbd engine on one nbdkit memory export
# (as bench-nbd.sh), QD32, alone and beside hog (hog.c: ~0.15 CPU in
# ~4 600 wake-ups a second, as the test frontend took), order
# alternating per round; 5 s runs after an uncounted warm-up; medians,
# with the machine's CPU per request.
set -euo pipefail
rounds=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /var/tmp/hog-nbd.XXXXXX)
gcc -O2 -o "$dir/hog" "$here/hog.c"
nbdkit -f -U "$dir/nbd.sock" -P "$dir/nbd.pid" memory size=256M &
np=$!
hp=
trap '[ -z "$hp" ] || kill $hp; kill $np; wait $np || true; rm -rf "$dir"' EXIT
for (( i=0; i<100; i++ )); do [ -s "$dir/nbd.pid" ] && break; sleep 0.1; done
uri="nbd+unix:///?socket=$dir/nbd.sock"
host_ticks() { awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8; print b }' /proc/stat; }
f() { local h0 h1
	h0=$(host_ticks)
	fio --name=q --ioengine=nbd --uri="$uri" --size=256M "$@" --output-format=json \
		--output="$dir/f.json" > /dev/null
	h1=$(host_ticks)
	python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['jobs'][0]['write']; print(round(d['iops']), round(($h1 - $h0) * 1e6 / $(getconf CLK_TCK) / max(d['total_ios'], 1), 2))" "$dir/f.json"; }
f --rw=write --bs=4M --iodepth=8 >/dev/null
f --rw=randwrite --bs=4k --iodepth=32 --runtime=2 --time_based >/dev/null
declare -A v
for (( i=0; i<rounds * 2; i++ )); do
	c=$(( (i / 2 + i % 2) % 2 ))
	if (( c == 1 )); then "$dir/hog" 185 31 & hp=$!; name=hog; else name=alone; fi
	r=$(f --rw=randwrite --bs=4k --iodepth=32 --runtime=5 --time_based)
	if [ -n "$hp" ]; then kill $hp; wait $hp 2>/dev/null || true; hp=; fi
	echo "round=$(( i / 2 + 1 )) $name iops=${r% *} host_us_per_req=${r#* }"
	v[$name]+=" ${r% *}"
done
for n in alone hog; do
	echo "$n median $(python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" ${v[$n]})"
done
