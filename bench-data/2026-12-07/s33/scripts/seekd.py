import sys,collections
for f in sys.argv[1:]:
    R=[]
    for l in open(f):
        p=l.split()
        if p[0]=='R': R.append(tuple(int(x) for x in p[1:]))
    R.sort(); t0=R[0][0]
    W=collections.Counter(); Rd=collections.Counter()
    for a,rd,d,op,off,ln in R:
        b=int((a-t0)/1e8)
        if op==0: Rd[b]+=ln
        elif op in (1,2): W[b]+=ln
    bs=rs=None
    for b in range(0,400):
        if bs is None and b>5 and W[b]+W[b+1]>3e6: bs=b
        if bs is not None and Rd[b]>0.5e6 and Rd[b+1]>0.5e6: rs=b; break
    ts=t0+bs*1e8; te=t0+rs*1e8
    P=sorted([r for r in R if ts<=r[0]<te],key=lambda r:r[2])
    h=collections.Counter(); end=None
    for r in P:
        if end is not None:
            d=r[4]-end
            if d==0: k='0'
            elif 0<d<=4096: k='+<=4K'
            elif -4096<=d<0: k='-<=4K'
            elif abs(d)<=1<<20: k='<=1M'
            elif abs(d)<=64<<20: k='<=64M'
            else: k='far'
            h[k]+=1
        end=r[4]+r[5]
    print(f[-6:],sorted(h.items()))
