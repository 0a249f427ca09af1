import json,sys,statistics as st,re,os
base=sys.argv[1] if len(sys.argv) > 1 else '/work/s29/rot'
cur=None
for l in open(base+'/rot.txt'):
    m=re.match(r'=== (\d) (\S+)',l)
    if m: cur=m.group(2); continue
    if l.startswith('results/'):
        d=json.load(open(os.path.join(base,l.strip(),'results.json')))
        runs=[r for r in d['runs'] if not r.get('warmup')]
        bo=[r['blkout'] for r in runs]; cr=[r['create'] for r in runs]
        print('%-8s %s blkout %s max/min %.3f sd %.1f%% | create max/min %.3f' % (cur, l.strip()[-6:],
              ' '.join('%.0f'%x for x in bo), max(bo)/min(bo), 100*st.stdev(bo)/st.mean(bo), max(cr)/min(cr)))
