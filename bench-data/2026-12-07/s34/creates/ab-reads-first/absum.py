import json,sys,glob,statistics as st,collections
d=sys.argv[1]
by=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d+'/*-r*/results.json')):
    v=f.split('/')[-2].split('-r')[0]
    for r in json.load(open(f))['runs']:
        if r.get('warmup'): continue
        for m in ('blkout','create','rewrite'):
            if r.get(m): by[(v,r['cell'])][m].append(r[m])
for (v,c),ms in sorted(by.items()):
    for m,b in ms.items():
        print('%-5s %-22s %-8s n %2d mean %7.0f range %.3f sd %.2f%%'%(v,c,m,len(b),st.mean(b),max(b)/min(b),100*st.stdev(b)/st.mean(b)), [int(x) for x in b])
