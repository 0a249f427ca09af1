import sys,re,statistics as st
cfg=None;rows={}
for l in open(sys.argv[1]):
    m=re.match(r'=== invocation (\d+) (\S+)',l)
    if m: cfg=m.group(2);continue
    if not l.startswith('bench='):continue
    kv=dict(x.split('=',1) for x in l.split() if '=' in x)
    key=(kv['bench'],kv['path'],cfg)
    rows.setdefault(key,[]).append(kv)
for k in sorted(rows):
    v=rows[k]
    f=lambda n:[float(x[n]) for x in v if n in x]
    out=[k[0],k[1],k[2],'n=%d'%len(v),'iops med %.0f'%st.median(f('iops'))]
    for n in ('bk_us_per_req','fio_proc_us_per_req','osd_us_per_req','host_us_per_req','fe_us_per_req'):
        if f(n): out.append('%s %.1f'%(n,st.median(f(n))))
    print(' | '.join(out))
