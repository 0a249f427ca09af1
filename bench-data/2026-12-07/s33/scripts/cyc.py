import sys,collections
from tracelib import load, blkout_window
for f in sys.argv[1:]:
    R,S=load(f); t0=R[0][0]
    ts,te=blkout_window(R)
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
