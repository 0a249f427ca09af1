import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f)); v={}
    for r in d['runs']:
        k='%s-wce%d-b%d'%(r['where'],r['wce'],r['barrier'])
        v.setdefault(k,[]).append(r.get('create'))
    for k,x in sorted(v.items()):
        y=[a for a in x if a]
        sp=max(y)/min(y) if len(y)>1 else 0
        print(f, k, 'spread %.3f'%sp, x)
