import sys,collections
from tracelib import load, blkout_window
for f in sys.argv[1:]:
    R,S=load(f); t0=R[0][0]
    ts,te=blkout_window(R)
    # busy between ts,te from S samples nearest
    Sb=[s for s in S if ts<=s[0]<=te]
    busy=(Sb[-1][1]-Sb[0][1])/(Sb[-1][0]-Sb[0][0]); seeks=Sb[-1][2]-Sb[0][2]; rot=Sb[-1][3]-Sb[0][3]; nio=Sb[-1][4]-Sb[0][4]
    wb=sum(r[5] for r in R if ts<=r[0]<te and r[3] in (1,2))
    print('%s phase %.2f s busy %.3f seeks %d rot %d ios %d wrMB %.1f MB/s %.2f'%(f[-14:],(te-ts)/1e9,busy,seeks,rot,nio,wb/1e6,wb/1e6/((te-ts)/1e9)))
