#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Write the seed inputs of fuzz-xs.c into fuzz-seeds/ (see fuzz-xs.c for
# the record format).  Run from sim/ after changing the seeds.  Seeds are
# committed and never minimized away; sim/fuzz-corpus/ is made only by
# "make fuzz-merge" (DESIGN-NOTES.md, "Fuzz seeds and corpora").
import os, struct

XS = dict(CONTROL=0, DIRECTORY=1, READ=2, GET_PERMS=3, WATCH=4, UNWATCH=5,
          TRANSACTION_START=6, TRANSACTION_END=7, INTRODUCE=8, RELEASE=9,
          GET_DOMAIN_PATH=10, WRITE=11, MKDIR=12, RM=13, SET_PERMS=14,
          IS_DOMAIN_INTRODUCED=17, RESUME=18, SET_TARGET=19,
          RESET_WATCHES=21, DIRECTORY_PART=22)

def msg(t, payload, tx=0, req=1):
    return struct.pack('<IIII', XS[t], req, tx, len(payload)) + payload

def args(*a):
    return b''.join(x.encode() + b'\0' for x in a)

def rec(sel, data):
    return struct.pack('<BH', sel, len(data)) + data

seeds = {
    'basic': [rec(0, msg('WRITE', b'/a/b\0hello')), rec(0, msg('READ', args('/a/b'))),
              rec(0, msg('MKDIR', args('/a/c'))), rec(0, msg('DIRECTORY', args('/a'))),
              rec(0, msg('GET_PERMS', args('/a/b'))), rec(0, msg('RM', args('/a')))],
    'perms': [rec(0, msg('WRITE', b'/s\0x')), rec(0, msg('SET_PERMS', args('/s', 'n0', 'b1'))),
              rec(2, msg('WRITE', b'/s/k\0v')), rec(2, msg('READ', args('/local/domain/0/name'))),
              rec(2, msg('WRITE', b'data/x\0y')), rec(2, msg('SET_PERMS', args('data/x', 'n1', 'r2'))),
              rec(3, msg('READ', args('/local/domain/1/data/x')))],
    'watch': [rec(0, msg('WATCH', args('/w', 'tok'))), rec(1, msg('WRITE', b'/w/a\0' + b'1')),
              rec(2, msg('WATCH', args('data', 'rel'))), rec(0, msg('WATCH', args('@releaseDomain', 'r'))),
              rec(0, msg('WATCH', args('@introduceDomain', 'i'))), rec(5, b'\0'), rec(6, b'\0'),
              rec(1, msg('RM', args('/w'))), rec(0, msg('UNWATCH', args('/w', 'tok'))),
              rec(0, msg('RESET_WATCHES', b''))],
    'transaction': [rec(0, msg('WRITE', b'/t/x\0' + b'0')), rec(0, msg('TRANSACTION_START', b'\0')),
                    rec(0, msg('READ', args('/t/x'), tx=1)), rec(0, msg('WRITE', b'/t/x\0' + b'1', tx=1)),
                    rec(1, msg('WRITE', b'/t/x\0' + b'2')), rec(0, msg('TRANSACTION_END', args('T'), tx=1)),
                    rec(0, msg('TRANSACTION_START', b'\0')), rec(0, msg('RM', args('/t'), tx=2)),
                    rec(0, msg('TRANSACTION_END', args('F'), tx=2)),
                    rec(2, msg('TRANSACTION_START', b'\0')), rec(2, msg('MKDIR', args('data/q'), tx=1)),
                    rec(2, msg('TRANSACTION_END', args('T'), tx=1))],
    'domain': [rec(0, msg('GET_DOMAIN_PATH', args('3'))), rec(0, msg('IS_DOMAIN_INTRODUCED', args('2'))),
               rec(0, msg('INTRODUCE', args('2', '0', '0'))), rec(0, msg('RELEASE', args('2'))),
               rec(0, msg('RESUME', args('2'))), rec(0, msg('SET_TARGET', args('2', '1'))),
               rec(0, msg('CONTROL', args('print', 'x'))), rec(7, b'\2'),
               rec(0, msg('DIRECTORY_PART', args('/local/domain', '0')))],
    'malformed': [rec(0, struct.pack('<IIII', 2, 1, 0, 5000)), rec(1, struct.pack('<IIII', 999, 1, 0, 0)),
                  rec(2, msg('READ', b'/abc')), rec(3, msg('WATCH', args('/x'))),
                  rec(4, msg('WRITE', b'/abc'))],
    'split': [rec(0, msg('WRITE', b'/split\0value')[:7]), rec(0, msg('WRITE', b'/split\0value')[7:]),
              rec(0, msg('READ', args('/split')) * 3)],
}

os.makedirs('fuzz-seeds', exist_ok=True)
for name, records in seeds.items():
    with open(os.path.join('fuzz-seeds', name), 'wb') as f:
        f.write(b''.join(records))
