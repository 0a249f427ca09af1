import struct,sys
out=sys.argv[1]; segs=eval(open(out+".layout").read())
def seed(n):
    x=(n*0x9e3779b97f4a7c15+0x632be59bd9b4e019)%2**64; b=bytearray()
    for i in range(512):
        x^=(x<<13)%2**64; x^=x>>7; x^=(x<<17)%2**64; b+=struct.pack('<Q',x)
    return bytes(b)
exp=b"".join(seed(1000+i)[f*512:(l+1)*512] for i,f,l in segs)
n=(len(exp)+4095)//4096
got=b"".join(open("%s.%d"%(out,k),"rb").read() for k in range(n))[:len(exp)]
bad=[s for s in range(len(exp)//512) if exp[s*512:(s+1)*512]!=got[s*512:(s+1)*512]]
print("sectors", len(exp)//512, "bad:", bad[:20])
