import sys
f=sys.argv[1]; B=float(sys.argv[2]) if len(sys.argv)>2 else 0.5
from tracelib import load
R,S=load(f)
t0=R[0][0]
bins={}
for a,rd,d,op,off,ln in R:
    b=int((a-t0)/1e9/B)
    x=bins.setdefault(b,[0,0,0,0])
    if op==0: x[0]+=ln
    elif op in(1,2): x[1]+=ln
    else: x[2]+=1
    x[3]+=1
sb={}
for s in S:
    b=int((s[0]-t0)/1e9/B); sb.setdefault(b,[]).append(s)
prev=None
for b in sorted(set(bins)|set(sb)):
    x=bins.get(b,[0,0,0,0]); s=sb.get(b)
    busy=seeks=''
    if s and prev:
        busy='%.2f'%((s[-1][1]-prev[1])/(s[-1][0]-prev[0])); seeks=s[-1][2]-prev[2]; rot=s[-1][3]-prev[3]
    else: rot=''
    if s: prev=s[-1]
    print('%6.1f rdMB %5.2f wrMB %5.2f fl %3d n %4d busy %s seeks %s rot %s'%(b*B,x[0]/1e6,x[1]/1e6,x[2],x[3],busy,seeks,rot))
