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
    def reg(r):
        if r[4]<4<<20: return 'j' if r[5]<=1024 else 'J'
        return 'D'
    s=''.join(reg(r) for r in P)
    # compress runs
    comp=[]
    for ch in s:
        if not comp or comp[-1][0]!=ch: comp.append([ch,1])
        else: comp[-1][1]+=1
    pat=''.join(c for c,n in comp)
    cycles=pat.split('j')
    h=collections.Counter(cycles)
    print(f[-6:],len(cycles),h.most_common(8))
