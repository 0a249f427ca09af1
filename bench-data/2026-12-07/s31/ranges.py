import json,sys,itertools
for f in sys.argv[1:]:
    d=json.load(open(f)); v={}
    for r in d['runs']:
        if r.get('warmup'): continue
        for m in ('blkout','create'):
            if r.get(m): v.setdefault((r['where'],r['wce'],r['barrier'],m),[]).append(r[m])
    out=[]
    for m in ('blkout','create'):
        pairs=[]
        for w in ('dom0','domU'):
            for o in (0,1):
                pairs.append(('%s wce%d b1/b0'%(w,o),(w,o,1,m),(w,o,0,m)))
                pairs.append(('%s barrier%d wce1/wce0'%(w,o),(w,1,o,m),(w,0,o,m)))
        for wc in (0,1):
            for b in (0,1):
                pairs.append(('domU/dom0 wce%d-b%d'%(wc,b),('domU',wc,b,m),('dom0',wc,b,m)))
        n=ok=0; bad=[]
        for name,a,b in pairs:
            if a in v and b in v:
                lo=min(v[a])/max(v[b]); hi=max(v[a])/min(v[b]); n+=1
                if hi/lo<=1.2: ok+=1
                else: bad.append('%s %.2f-%.2f (%.2f)'%(name,lo,hi,hi/lo))
        sp=[max(x)/min(x) for k,x in v.items() if k[3]==m and len(x)>1]
        print(f.split('/')[-1], m, 'cells max/min %.3f-%.3f'%(min(sp),max(sp)), 'ratios within 1.2: %d of %d'%(ok,n), '; '.join(bad))
