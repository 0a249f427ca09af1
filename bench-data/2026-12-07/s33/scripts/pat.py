import sys,collections
from tracelib import load, blkout_window
for f in sys.argv[1:]:
    R,S=load(f); t0=R[0][0]
    ts,te=blkout_window(R)
    P=[r for r in R if ts<=r[0]<te]
    # service order by done time (wce0 writes: done = on media)
    P2=sorted(P,key=lambda r:r[2])
    def reg(off):
        if off<4<<20: return 'J'
        if off>200<<20: return 'M'
        if off<10<<20: return 'm'
        return 'D'
    seq=[reg(r[4]) for r in P2]
    alt=sum(1 for a,b in zip(seq,seq[1:]) if a!=b)
    c=collections.Counter(seq)
    byts=collections.Counter()
    for r in P2: byts[reg(r[4])]+=r[5]
    sizes=collections.Counter((reg(r[4]),r[5]//1024) for r in P2)
    span=(P2[-1][2]-P2[0][0])/1e9
    # commit cycles: count of journal-superblock-like 1K writes at J offset ~0.42M
    jsb=sum(1 for r in P2 if reg(r[4])=='J' and r[5]<=1024)
    print(f[-6:],'span %.3f'%span,'n',len(P2),'alt',alt,dict(c),{k:round(v/1e6,1) for k,v in byts.items()},'J<=1K',jsb,'MBps %.2f'%(sum(byts.values())/1e6/span))
