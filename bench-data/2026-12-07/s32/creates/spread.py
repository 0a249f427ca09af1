import json,sys,glob,collections
for d in sys.argv[1:]:
    fs=glob.glob(d+'/results.json')+glob.glob(d+'/*/results.json')
    for f in fs:
        j=json.load(open(f)); v=collections.defaultdict(list)
        for r in j['runs']:
            if r.get('warmup'): continue
            for m in ('blkout','create'):
                if r.get(m): v[(r['where'],r['wce'],r['barrier'],m)].append(r[m])
        out=[]
        for k in sorted(v):
            x=v[k]; out.append('%s w%d b%d %s %s spread %.3f' % (k[0],k[1],k[2],k[3],[int(y) for y in x],max(x)/min(x)))
        print(d); print('  '+'\n  '.join(out))
