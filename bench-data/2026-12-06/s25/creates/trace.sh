#!/bin/bash
# Where does a cache-on, barrier-off create phase wait?  One cell, traced.
B=/work/b-plain/harness/blkbench
W=${1:-dom0}
T=/sys/kernel/tracing
out=/work/s25/tr-$W$HOG
rm -rf $out; mkdir -p $out
flock -x /work/heavy.lock bash -c "
[ -n \"$HOG\" ] && { ( while :; do :; done ) & h=\$!; }
echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb
echo 'comm == \"bonnie++\"' > $T/events/syscalls/sys_enter_openat/filter
echo 1 > $T/events/syscalls/sys_enter_openat/enable
echo 'comm == \"bonnie++\"' > $T/events/syscalls/sys_enter_unlink/filter
echo 1 > $T/events/syscalls/sys_enter_unlink/enable
echo 1 > $T/events/writeback/balance_dirty_pages/enable
echo 1 > $T/events/jbd2/enable
echo 'stacktrace if prev_comm == \"bonnie++\" && prev_state != 0' > $T/events/sched/sched_switch/trigger
echo 1 > $T/tracing_on
$B run --disk-model 2008 --where $W --wce 1 --barrier 0 --runs ${RUNS:-3} --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --out $out/res > $out/run.log 2>&1
echo 0 > $T/tracing_on; [ -n \"$HOG\" ] && kill \$h
cat $T/trace > $out/trace.txt
echo '!stacktrace if prev_comm == \"bonnie++\" && prev_state != 0' > $T/events/sched/sched_switch/trigger
echo 0 > $T/events/enable
echo 0 > $T/events/syscalls/sys_enter_openat/filter; echo 0 > $T/events/syscalls/sys_enter_unlink/filter
"
echo done
