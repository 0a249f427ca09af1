#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""mkdmlog: write a Linux dm-log-writes log from a text script, for the
blkcrash tests (this host has no device-mapper to record a real one).
The format is described in harness/crash/dmlog.c.  Usage:

    mkdmlog.py OUT < SCRIPT

Script lines (offsets and lengths in BYTES, multiples of the block size):
    bs BYTES                 block size (first line; default 512)
    W OFFSET LEN BYTE [fua] [flush] [meta]
                             a write of LEN bytes all equal to BYTE
                             (0..255); flush: a REQ_PREFLUSH write
    F                        a flush without data
    D OFFSET LEN             a discard
    M TEXT                   a mark (the rest of the line)
    raw SECTOR NR FLAGS DATALEN [DATABLOCKS]
                             an entry header with these raw fields (in
                             blocks) and DATABLOCKS blocks of 0x5a after it
    entries N                the super block claims N entries (default:
                             as many as written)
    diff BASE FINAL SEED     a 4096-byte write of FINAL's content for every
                             block where the two files differ, in an order
                             shuffled by SEED (0: in order)
    magic HEX | version N    what the super block says
    tear BYTES               drop the last BYTES bytes of the file
    pad BYTES                append BYTES zero bytes (a log device copy
                             is larger than what the log used)
    # ...                    a comment
"""
import random
import struct
import sys

MAGIC = 0x6a736677736872
FLUSH, FUA, DISCARD, MARK, META = 1, 2, 4, 8, 16


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: mkdmlog.py OUT < SCRIPT")
    bs = 512
    magic, version, claim = MAGIC, 1, None
    body = bytearray()
    n = 0
    tear = 0
    pad = 0

    def entry(sector, nr, flags, dlen, text=b"", data=b""):
        hdr = struct.pack("<QQQQ", sector, nr, flags, dlen) + text
        body.extend(hdr + bytes(bs - len(hdr)))
        body.extend(data)

    for lineno, line in enumerate(sys.stdin, 1):
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        try:
            op = w[0]
            if op == "bs":
                bs = int(w[1])
            elif op == "W":
                off, ln, byte = int(w[1]), int(w[2]), int(w[3])
                if off % bs or ln % bs:
                    raise ValueError("not block-aligned")
                fl = (FUA if "fua" in w[4:] else 0) | \
                    (FLUSH if "flush" in w[4:] else 0) | \
                    (META if "meta" in w[4:] else 0)
                entry(off // bs, ln // bs, fl, 0, data=bytes([byte]) * ln)
                n += 1
            elif op == "F":
                entry(0, 0, FLUSH, 0)
                n += 1
            elif op == "D":
                off, ln = int(w[1]), int(w[2])
                entry(off // bs, ln // bs, DISCARD, 0)
                n += 1
            elif op == "M":
                text = line.split(None, 1)[1].rstrip("\n").encode()
                entry(0, 0, MARK, len(text), text=text)
                n += 1
            elif op == "raw":
                blocks = int(w[5]) if len(w) > 5 else 0
                entry(int(w[1], 0), int(w[2], 0), int(w[3], 0), int(w[4], 0),
                      data=b"\x5a" * (blocks * bs))
                n += 1
            elif op == "diff":
                with open(w[1], "rb") as f:
                    base = f.read()
                with open(w[2], "rb") as f:
                    fin = f.read()
                blocks = [o for o in range(0, len(fin), 4096)
                          if fin[o:o + 4096] != base[o:o + 4096]]
                if int(w[3]):
                    random.Random(int(w[3])).shuffle(blocks)
                for o in blocks:
                    data = fin[o:o + 4096].ljust(4096, b"\0")
                    entry(o // bs, 4096 // bs, 0, 0, data=data)
                    n += 1
            elif op == "entries":
                claim = int(w[1])
            elif op == "magic":
                magic = int(w[1], 16)
            elif op == "version":
                version = int(w[1])
            elif op == "tear":
                tear = int(w[1])
            elif op == "pad":
                pad = int(w[1])
            else:
                raise ValueError("unknown line")
        except (ValueError, IndexError) as e:
            sys.exit("mkdmlog: line %d: %s" % (lineno, e))
    sup = struct.pack("<QQQI", magic, version, n if claim is None else claim, bs)
    out = sup + bytes(bs - len(sup)) + bytes(body) + bytes(pad)
    if tear:
        out = out[:-tear]
    with open(sys.argv[1], "wb") as f:
        f.write(out)


main()
