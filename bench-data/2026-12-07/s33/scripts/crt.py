import sys,collections,json
from tracelib import load
for f in sys.argv[1:]:
    R,S=load(f)
    # find the >1s gap in arrivals after the start
    g=None
    for a,b in zip(R,R[1:]):
        if b[0]-a[0]>1e9 and a[0]-R[0][0]>3e9: g=b[0]; break
    # window: g .. g+W
    for W in (0.5,):
        P=[r for r in R if g<=r[0]<g+W*1e9]
        Sb=[s for s in S if g<=s[0]<=g+W*1e9]
        wr=sum(r[5] for r in P if r[3] in (1,2)); nw=sum(1 for r in P if r[3] in (1,2)); nr=sum(1 for r in P if r[3]==0); nf=sum(1 for r in P if r[3]==3)
        seeks=Sb[-1][2]-Sb[0][2]; busy=(Sb[-1][1]-Sb[0][1])/(Sb[-1][0]-Sb[0][0])
        szs=collections.Counter(min(r[5]//1024,64) for r in P if r[3] in (1,2))
        print(f.split('/')[-2],f[-6:],'W %.1f wrMB %.2f nwr %d nrd %d nfl %d seeks %d busy %.2f'%(W,wr/1e6,nw,nr,nf,seeks,busy), sorted(szs.items())[:6])
