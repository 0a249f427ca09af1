import sys,collections
from tracelib import load, blkout_window
for f in sys.argv[1:]:
    R,S=load(f); t0=R[0][0]
    ts,te=blkout_window(R)
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
