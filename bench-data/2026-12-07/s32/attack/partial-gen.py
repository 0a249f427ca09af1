import random,sys,struct
r=random.Random(int(sys.argv[1])); nseg=int(sys.argv[2]); out=sys.argv[3]
segs=[]
for i in range(nseg):
    f=r.randrange(0,8); l=r.randrange(f,8); segs.append((i,f,l))
tot=sum(l-f+1 for _,f,l in segs)
print("# total sectors",tot)
for i in range(nseg): print("fill p%d seed:%d"%(i,1000+i))
print("send op=indirect indirect_op=write id=1 sector=64 igref=p990 "+" ".join("seg=p%d:%d:%d"%s for s in segs)+" expect=OKAY")
nread=(tot+7)//8
print("send op=indirect indirect_op=read id=2 sector=64 igref=p991 "+" ".join("seg=p%d"%(500+k) for k in range(nread))+" expect=OKAY")
for k in range(nread): print("dump p%d %s.%d"%(500+k,out,k))
open(out+".layout","w").write(repr(segs))
