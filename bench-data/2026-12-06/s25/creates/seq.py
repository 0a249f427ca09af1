import re,collections,sys
exec(open('/work/s25/offcpu.py').read().split("# create windows")[0])
bon=[e for e in ev if e[1]=='bonnie++']
def fl(e):
    m=re.search(r'flags: (0x[0-9a-f]+)',e[3]); return int(m.group(1),16) if m else 0
cre=[i for i,e in enumerate(bon) if e[2].startswith('sys_openat') and fl(e)==0xc1]
groups=[]
for i in cre:
    if groups and bon[i][0]-bon[groups[-1][-1]][0]<0.3 and len(groups[-1])<4096: groups[-1].append(i)
    else: groups.append([i])
for gi,idx in enumerate(groups):
    a=bon[idx[0]][0]; b=bon[idx[-1]][0]
    tot=collections.Counter(); rb=[]
    for i in range(idx[0],idx[-1]):
        e=bon[i]
        if e[2]=='<stack':
            nxt=next((x for x in bon[i+1:] if x[0]>e[0]),None); dt=nxt[0]-e[0]
            st=e[4]; k='other'
            for kk in ['__jbd2_log_wait_for_space','ext4_read_bh','wait_transaction_locked']:
                if any(kk in s for s in st): k=kk;break
            tot[k]+=dt
            if k=='ext4_read_bh': rb.append(int(dt*1000))
    print("%s %.3f: %d in %.3f s (%5.0f/s) jbd2space %.3f readbh %.3f %s other %.3f oncpu %.3f"%('seq' if gi%2==0 else 'ran',a,len(idx),b-a,len(idx)/(b-a),tot['__jbd2_log_wait_for_space'],tot['ext4_read_bh'],rb,tot['other']+tot['wait_transaction_locked'],b-a-sum(tot.values())))
