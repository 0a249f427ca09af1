#!/usr/bin/env python3
"""Where bonnie++'s sequential create phase spends its time off the CPU, per run."""
import re,collections,json,sys
# usage: offcpu.py TRACE RESULTS.JSON [--creates-only]
# TRACE: ftrace text of sched_switch with prev_comm or next_comm bonnie++
# and options/stacktrace; --creates-only when it holds only the
# sequential create phases (sw6-creates.trace), else every other create
# phase found is the sequential one (bonnie++ then makes random creates).
tr=sys.argv[1]; res=sys.argv[2]; only='--creates-only' in sys.argv
ev=[]; cur=None
for l in open(tr):
    m=re.search(r'\s(\d+\.\d+): sched_switch: prev_comm=(\S+) prev_pid=\d+ prev_prio=\d+ prev_state=(\S+) ==> next_comm=(\S+)',l)
    if m:
        cur=[float(m.group(1)),m.group(2),m.group(3),m.group(4),[]]; ev.append(cur); continue
    m=re.match(r'\s+=> (\S+)',l)
    if m and cur: cur[4].append(m.group(1).split('+')[0])
cr=[r['create'] for r in json.load(open(res))['runs']]
# out events (prev=bonnie++) and in events (next=bonnie++)
skip=set('trace_event_raw_event_sched_switch __traceiter_sched_switch __schedule schedule io_schedule schedule_timeout bit_wait_io __wait_on_bit out_of_line_wait_on_bit __wait_on_buffer preempt_schedule_common __cond_resched schedule_preempt_disabled rwsem_down_write_slowpath rwsem_down_read_slowpath __mutex_lock mutex_lock down_write down_read wait_woken prepare_to_wait_event folio_wait_bit_common'.split())
def key(st,stack):
    fs=[f for f in stack if f not in skip]
    if 'ext4_read_inode_bitmap' in fs: return 'inode bitmap read'
    if 'blk_mq_get_tag' in fs: return 'loop tag'
    if '__jbd2_log_wait_for_space' in fs: return 'journal space (checkpoint)'
    if 'wait_transaction_locked' in fs: return 'transaction locked'
    if st.startswith('R'): return 'preempted'
    return st+' '+'<'.join(fs[:3])
# create phases: clusters of events with ext4_create in stack
cidx=[i for i,e in enumerate(ev) if e[1]=='bonnie++' and ('__ext4_new_inode' in e[4] or 'ext4_create' in e[4])]
# group into phases separated by >0.15 s; take every other (seq create, then random create)
phases=[]; 
for i in cidx:
    t=ev[i][0]
    if phases and t-phases[-1][1]<0.15: phases[-1][1]=t
    else: phases.append([t,t])
seq=phases if only else phases[0::2]
print(len(phases),'phases; seq', len(seq))
for (a,b),c in zip(seq,cr):
    dur=4096/c
    off=collections.Counter(); lastout=None
    for e in ev:
        if e[0]<a-0.02 or e[0]>a+dur: continue
        if e[1]=='bonnie++': lastout=e
        elif e[3]=='bonnie++' and lastout:
            off[key(lastout[2],lastout[4])]+=e[0]-lastout[0]; lastout=None
    tot=sum(off.values())
    print('%5d phase %3.0f ms off-cpu %3.0f ms: %s'%(c,dur*1000,tot*1000,', '.join('%s %.0f'%(k,v*1000) for k,v in off.most_common(5))))
