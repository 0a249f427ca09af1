import random, sys
seed=int(sys.argv[1]); n=int(sys.argv[2]); sectors=int(sys.argv[3]); ringref=int(sys.argv[4]) if len(sys.argv)>4 else 8
r=random.Random(seed)
def gref():
    c=r.random()
    if c<0.8: return "p%d"%r.randrange(0,400)
    if c<0.85: return "0xffffffff"
    if c<0.9: return str(ringref)
    if c<0.95: return "ro%d"%r.randrange(0,4)
    return str(r.randrange(0,5000))
def seg():
    g=gref()
    if r.random()<0.85:
        f=r.randrange(0,8); l=r.randrange(f,8)
    else:
        f=r.randrange(0,12); l=r.randrange(0,12)
    return "seg=%s:%d:%d"%(g,f,l)
def sector():
    c=r.random()
    if c<0.6: return r.randrange(0,sectors)
    if c<0.8: return sectors-r.randrange(0,300)
    if c<0.9: return r.randrange(0,2**64)
    return 2**64-r.randrange(1,300)
print("grant ro0 ro\ngrant ro1 ro\ngrant ro2 ro\ngrant ro3 ro")
for i in range(16): print("fill p%d seed:%d"%(i,i))
pending=0
for i in range(n):
    c=r.random()
    ops=["read","write","flush","barrier","discard","indirect","reserved","7","255","0x80"]
    op=r.choice(ops) if c<0.3 else r.choice(["read","write","indirect","discard","flush"])
    parts=["send","op="+op,"sector=%d"%sector()]
    if op=="indirect":
        ns=r.choice([0,1,5,16,32,33,64,200,256,257,511,512,513,1000])
        io=r.choice(["read","write","read","write","flush","discard","barrier","99"])
        parts.append("indirect_op="+io)
        k=min(ns,256) if r.random()<0.9 else r.randrange(0,40)
        parts+= [seg() for _ in range(k)]
        if k!=ns: parts.append("nr_segments=%d"%ns)
        parts.append("igref=p%d"%(900+pending))
        if r.random()<0.1: parts.append("igref=%s"%gref())
    elif op=="discard":
        parts.append("nr_sectors=%d"%r.choice([0,1,8,r.randrange(0,sectors),2**64-1,2**63,r.randrange(0,2**64)]))
        if r.random()<0.3: parts.append("secure=1")
        if r.random()<0.2: parts.append(seg())
    else:
        k=r.choice([0,1,1,2,3,11,11,12,20])
        parts+=[seg() for _ in range(k)]
        if r.random()<0.1: parts.append("nr_segments=%d"%r.randrange(0,256))
    if r.random()<0.05: parts.append("handle=%d"%r.randrange(0,65536))
    parts.append("nopush")
    print(" ".join(parts)); pending+=1
    if pending>=r.choice([1,4,16,30]) or pending>=30:
        print("push"); print("wait-all timeout=20000"); pending=0
print("push"); print("wait-all timeout=20000")
print("fill p0 seed:77\nsend op=write sector=0 seg=p0 expect=OKAY\nsend op=read sector=0 seg=p1 expect=OKAY\ncheck p1 seed:77")
