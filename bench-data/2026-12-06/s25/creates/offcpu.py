import re,sys,collections
f=sys.argv[1]
ev=[]  # (ts, task, kind, text, stack)
cur=None
pat=re.compile(r'^\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+):\s+(\S+?):?\s(.*)$')
for line in open(f):
    if line.startswith('#'): continue
    if line.startswith(' => '):
        if cur is not None: cur[4].append(line[4:].strip())
        continue
    m=pat.match(line)
    if not m: continue
    cur=[float(m.group(3)), m.group(1), m.group(4), m.group(5), []]
    ev.append(cur)
# create windows: bonnie openat with O_CREAT
def fl(e):
    m=re.search(r'flags: (0x[0-9a-f]+)',e[3]); return int(m.group(1),16) if m else 0
cre=[e[0] for e in ev if e[1]=='bonnie++' and e[2].startswith('sys_openat') and fl(e)&0x40]
# cluster
wins=[]
for t in cre:
    if wins and t-wins[-1][1]<2: wins[-1][1]=t
    else: wins.append([t,t])
print("create windows:",[(round(a,3),round(b-a,3)) for a,b in wins])
bon=[e for e in ev if e[1]=='bonnie++']
KEYS=['balance_dirty_pages','__jbd2_log_wait_for_space','jbd2_log_wait_commit','wait_transaction_locked','add_transaction_credits','start_this_handle','folio_wait_writeback','folio_wait_bit','__bio_queue_enter','blk_mq_get_tag','mem_cgroup','try_to_free','shrink','rwsem','mutex','do_sys_open']
for a,b in wins:
    tot=collections.Counter(); n=collections.Counter()
    bdp=[]
    for i,e in enumerate(bon):
        if e[0]<a or e[0]>b: continue
        if e[2]=='balance_dirty_pages':
            m=re.search(r' pause=(-?\d+)',e[3]); bdp.append(int(m.group(1)))
        if e[2]=='<stack' or e[3].startswith('trace>') or e[2]=='<stack trace>':
            nxt=next((x for x in bon[i+1:] if x[0]>e[0]),None)
            dt=(nxt[0]-e[0]) if nxt else 0
            st=e[4]
            k='other:'+(st[4] if len(st)>4 else '?')
            for kk in KEYS:
                if any(kk in s for s in st): k=kk; break
            tot[k]+=dt; n[k]+=1
    print("window %.3f len %.3f s: off-cpu total %.3f s; bdp events %d pauses>0 %d sum %d ms"%(a,b-a,sum(tot.values()),len(bdp),sum(1 for p in bdp if p>0),sum(p for p in bdp if p>0)))
    for k,v in tot.most_common(8): print("   %-30s %.3f s  (%d)"%(k,v,n[k]))
