import json,sys,statistics as st
for t in sys.argv[1:]:
    d=json.load(open(t+'/res/results.json'))
    for m in ('blkout','create','rewrite'):
        b=[r[m] for r in d['runs'] if r[m]]
        print('%-6s %-8s mean %7.0f range %.3f sd %.2f%%'%(t.split('/')[-1],m,st.mean(b),max(b)/min(b),100*st.stdev(b)/st.mean(b)), b)
