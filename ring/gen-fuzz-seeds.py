#!/usr/bin/env python3
# Writes the seeds of fuzz-request (ring/fuzz-seeds/), in the input layout
# documented at the top of fuzz-harness.c.  Run from ring/ when the layout
# changes.  Seeds are committed and never minimized away; ring/fuzz-corpus/
# is made only by "make fuzz-merge" (DESIGN-NOTES.md, "Fuzz seeds and
# corpora").
import os
import struct

NATIVE, X86_32, X86_64 = 0, 1, 2
RO, DISCARD, ABS = 1, 2, 4


def hdr(order=0, abi=NATIVE, flags=DISCARD, sshift=0, max_ind=256,
        sectors=1 << 20, start=0, prod=1, rounds=0, ind_off=0):
    return struct.pack('<BBBBHQIIBH', order, abi, flags, sshift, max_ind,
                       sectors, start, prod & 0xffffffff, rounds, ind_off)


def segs(n, first=0, last=7, base=100):
    return b''.join(struct.pack('<IBBxx', base + i, first, last) for i in range(n))


def rw(abi, op, rid, sector, nseg, first=0, last=7):
    s = segs(min(nseg, 11), first, last).ljust(88, b'\0')
    if abi == X86_32:
        return struct.pack('<BBHQQ', op, nseg, 0, rid, sector) + s
    return struct.pack('<BBHIQQ', op, nseg, 0, 0, rid, sector) + s


def discard(abi, rid, sector, nsec, flag=0):
    if abi == X86_32:
        return struct.pack('<BBHQQQ', 5, flag, 0, rid, sector, nsec).ljust(108, b'\0')
    return struct.pack('<BBHIQQQ', 5, flag, 0, 0, rid, sector, nsec).ljust(112, b'\0')


def indirect(abi, op, rid, sector, nseg, grefs):
    g = struct.pack('<8I', *(grefs + [0] * (8 - len(grefs))))
    if abi == X86_32:
        return (struct.pack('<BBHQQHH', 6, op, nseg, rid, sector, 0, 0) + g).ljust(108, b'\0')
    return (struct.pack('<BBHIQQHH', 6, op, nseg, 0, rid, sector, 0, 0) + g).ljust(112, b'\0')


seeds = {
    'read-native': hdr() + rw(NATIVE, 0, 1, 8, 1),
    'write-x86_32-2': hdr(abi=X86_32, prod=2, rounds=1) + rw(X86_32, 1, 2, 16, 11),
    'discard-secure-x86_64': hdr(abi=X86_64) + discard(X86_64, 3, 2048, 2048, 1),
    'indirect-read-12': hdr(ind_off=112) + indirect(NATIVE, 0, 4, 0, 12, [9]) + segs(12),
    'indirect-write-256-x86_32': hdr(abi=X86_32, ind_off=108)
        + indirect(X86_32, 1, 5, 64, 256, [9]) + segs(256, 1, 6),
    'overflow-ring-size-plus-1': hdr(prod=33) + rw(NATIVE, 0, 6, 0, 1),
    'wrap-2-32-x86_64': hdr(order=1, abi=X86_64, start=0xfffffff0, prod=40, rounds=39)
        + rw(X86_64, 0, 7, 8, 2),
    'flush-4k-garbage-sector': hdr(sshift=3) + rw(NATIVE, 3, 8, 0xffffffffffffff00, 0),
    'wrap-sector-2-64': hdr(flags=DISCARD) + rw(NATIVE, 1, 9, 2**64 - 8, 1),
    'unknown-op-7-ro': hdr(flags=RO) + rw(NATIVE, 7, 10, 0, 1),
}

os.makedirs('fuzz-seeds', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('fuzz-seeds', 'seed-' + name), 'wb') as f:
        f.write(data)
