import sys,glob
res=[]
for f in sys.argv[1:]:
    R=[];S=[]
    for l in open(f):
        p=l.split()
        if p[0]=='R': R.append(tuple(int(x) for x in p[1:]))
        else: S.append(tuple(int(x) for x in p[1:]))
    R.sort()
    t0=R[0][0]
    # rewrite begins: first moment with reads of >=1MB within 0.1s after 1s
    # find blkout start: first time after t0+1s where write MB in 0.2s window > 1.5
    def win(t,dt,op):
        return sum(r[5] for r in R if t<=r[0]<t+dt and (r[3] in op))
    bs=None; rs=None
    t=t0
    # precompute bins of 0.1s
    import collections
    W=collections.Counter(); Rd=collections.Counter()
    for a,rd,d,op,off,ln in R:
        b=int((a-t0)/1e8)
        if op==0: Rd[b]+=ln
        elif op in (1,2): W[b]+=ln
    for b in range(0,400):
        if bs is None and b>5 and W[b]+W[b+1]>3e6: bs=b
        if bs is not None and Rd[b]>0.5e6 and Rd[b+1]>0.5e6: rs=b; break
    ts=t0+bs*1e8; te=t0+rs*1e8
    # busy between ts,te from S samples nearest
    Sb=[s for s in S if ts<=s[0]<=te]
    busy=(Sb[-1][1]-Sb[0][1])/(Sb[-1][0]-Sb[0][0]); seeks=Sb[-1][2]-Sb[0][2]; rot=Sb[-1][3]-Sb[0][3]; nio=Sb[-1][4]-Sb[0][4]
    wb=sum(r[5] for r in R if ts<=r[0]<te and r[3] in (1,2))
    print('%s phase %.2f s busy %.3f seeks %d rot %d ios %d wrMB %.1f MB/s %.2f'%(f[-14:],(te-ts)/1e9,busy,seeks,rot,nio,wb/1e6,wb/1e6/((te-ts)/1e9)))
