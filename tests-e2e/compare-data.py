#!/usr/bin/env python3
#
# Data trace end to end: the accesses rvtrace-decode put on instructions
# (JSON lines, "data") against the memory accesses QEMU made (the memlog
# plugin's log), for one hart.
#
#   compare-data.py --memlog LOG --decoded JSON --hart N [--min N]
#                   [--filtered KIND,...]
#
# The decoded accesses start where tracing started: the first of them is
# found in the log (with the next ones, so that a loop does not match an
# earlier iteration), and from there every decoded load, store and atomic
# must be the next access of the log, with the same instruction, kind,
# address, size and value (for a store-conditional, the value it
# stored, which the log has in the store half of its read-modify-write).  Log accesses that the
# data trace does not report are skipped only if they are a failed SC's
# (an "rmw" with no decoded access).  CSR accesses are no memory accesses.
#
# With data filters (--filtered load,store: the kinds they pass) the
# accesses are not on instructions but "data" events: they are compared
# with the log's accesses of those kinds, in order, without the PC.
#
# Copyright (c) 2026 The rvpa authors
# SPDX-License-Identifier: GPL-2.0-or-later

import argparse
import json
import sys

ALIGN = 16


def read_memlog(path, hart):
    """
    (pc, kind, addr, size, value, stored) per access; QEMU logs an atomic
    read-modify-write as a load and then a store ("rmw"), which become one
    "rmw" with the loaded value and the stored one.
    """
    out = []
    with open(path) as f:
        for line in f:
            vcpu, pc, kind, addr, size, value = line.split()
            if int(vcpu) != hart:
                continue
            rec = (int(pc, 16), kind, int(addr, 16), int(size),
                   int(value, 16), None)
            if (kind == 'rmw' and out and out[-1][1] == 'load' and
                    out[-1][0] == rec[0] and out[-1][2] == rec[2]):
                rec = (rec[0], 'rmw', rec[2], rec[3], out[-1][4], rec[4])
                out.pop()
            out.append(rec)
    return out


def read_decoded(path):
    out = []
    with open(path) as f:
        for line in f:
            if not line.startswith('{'):
                continue
            rec = json.loads(line)
            if rec.get('type') == 'data':      # filtered: no instruction
                rec = {'addr': None, 'data': rec}
            elif rec.get('type') != 'insn':
                continue
            d = rec.get('data')
            if not d:
                continue
            # an instruction of several accesses (Zcmp's push and pop)
            for a in d if isinstance(d, list) else [d]:
                if a['dtype'].startswith('csr'):
                    continue
                out.append((int(rec['addr'], 16) if rec['addr'] else None,
                            a['dtype'],
                            int(a['addr'], 16) if 'addr' in a else None,
                            a['size'],
                            int(a['value'], 16) if 'value' in a else None))
    return out


def kind_fits(dtype, kind):
    if dtype == 'load':
        return kind == 'load'
    if dtype == 'store':
        return kind in ('store', 'rmw')     # rmw: a successful SC
    return kind == 'rmw'                    # AMOs


def same(dec, log):
    pc, dtype, addr, size, value = dec
    lpc, kind, laddr, lsize, loaded, stored = log
    if pc is not None and pc != lpc:
        return False
    if not kind_fits(dtype, kind) or size != lsize:
        return False
    if addr is not None and addr != laddr:
        return False
    mask = (1 << (8 * size)) - 1
    if value is None:
        return True
    if dtype == 'store' and kind == 'rmw':     # SC: what it stored
        return value & mask == stored & mask
    return value & mask == loaded & mask


def start_of(dec, log):
    k = min(ALIGN, len(dec))
    for i in range(len(log) - k + 1):
        if all(same(dec[j], log[i + j]) for j in range(k)):
            return i
    return None


def show(rec):
    return '%s %s %s size %d value %s' % (
        '%x' % rec[0] if rec[0] is not None else '-', rec[1], hex(rec[2]) if rec[2] is not None else '?', rec[3],
        hex(rec[4]) if rec[4] is not None else '?') + (
        ' stored %s' % hex(rec[5]) if len(rec) > 5 and rec[5] is not None
        else '')


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument('--memlog', required=True)
    ap.add_argument('--decoded', required=True)
    ap.add_argument('--hart', type=int, default=0)
    ap.add_argument('--min', type=int, default=100,
                    help='fewest decoded accesses that pass')
    ap.add_argument('--filtered', metavar='KINDS',
                    help='data filters passed only these log kinds')
    args = ap.parse_args(argv)
    log = read_memlog(args.memlog, args.hart)
    if args.filtered:
        kinds = args.filtered.split(',')
        log = [rec for rec in log if rec[1] in kinds]
    dec = read_decoded(args.decoded)
    print('memlog: %d accesses of hart %d; decoded: %d accesses' %
          (len(log), args.hart, len(dec)))
    if len(dec) < args.min:
        print('FAIL: fewer than %d decoded accesses' % args.min)
        return 1
    i = start_of(dec, log)
    if i is None:
        print('FAIL: the first decoded accesses are not in the log: ' +
              show(dec[0]))
        return 1
    skipped = 0
    kinds = {}
    for j, d in enumerate(dec):
        while i < len(log) and not same(d, log[i]) and log[i][1] == 'rmw':
            skipped += 1        # a failed store-conditional
            i += 1
        if i >= len(log) or not same(d, log[i]):
            print('FAIL: decoded access %d: %s' % (j, show(d)))
            print('      the log has:     %s' %
                  (show(log[i]) if i < len(log) else 'nothing more'))
            return 1
        kinds[d[1]] = kinds.get(d[1], 0) + 1
        i += 1
    print('PASS: %d accesses from log entry %d (%s), %d failed SCs skipped'
          % (len(dec), start_of(dec, log),
             ', '.join('%s %d' % kv for kv in sorted(kinds.items())),
             skipped))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
