#!/usr/bin/env python3
# Compare a decoded trace with what QEMU executed.
#
#   compare.py --execlog LOG --decoded DEC [--hart N] [checks...]
#
# LOG is the contrib execlog plugin's output (-d plugin -D LOG): one line
# per executed instruction, "CPU, 0xPC, 0xBITS, "disassembly"...".  DEC is
# rvtrace-decode's default output for one source: an address per line,
# events as "# TYPE key=value ...".
#
# Executed is not retired (E-trace 4.1): an instruction that faults
# (illegal, a faulting load/store) is in the execlog but not in the trace.
# The decoder marks such a trap with an exception event: the execlog then
# holds one more instruction before the handler (none for an instruction
# fetch fault, where the faulting instruction was never fetched).  ecall,
# ebreak and c.ebreak are different: they are the last retired
# instruction before their trap (the E-trace decoder algorithm's
# is_uninferable_discon), in both.
#
# The decoded trace is cut into segments at gap, end and error events;
# each segment must be found, instruction for instruction, in the
# execlog, after the previous one.  A mismatch prints the first differing
# position with context.
#
# --filter-range LO:HI (the encoder traced only iaddr in [LO, HI)): the
# segments must then hold exactly the execlog's instructions in that
# range, every one of them, and nothing else.
#
# SPDX-License-Identifier: GPL-2.0-or-later

import argparse
import re
import sys

# Exceptions whose faulting instruction was never fetched (no execlog
# line): instruction access fault, instruction page fault, instruction
# guest-page fault.
FETCH_FAULTS = {1, 12, 20}
# A landing-pad fault (Zicfilp: a software-check exception, cause 18,
# with tval 2) at an instruction that is not a landing pad is raised at
# its start, before it executes (no execlog line); one of an lpad whose
# label or alignment is wrong, inside it (a line): either, as for
# UNKNOWN_SKIP.  (An sspopchk that fails, tval 3, executes and does not
# retire, as a fault.)
SW_CHECK, SW_CHECK_LANDING_PAD = 18, 2
# Exceptions of the instructions that retire, then trap: breakpoint
# (ebreak, c.ebreak; a trigger's breakpoint comes before its instruction
# executes, which the execlog then does not hold either) and the ecalls.
RETIRED_TRAPS = {3, 8, 9, 10, 11}
# An exception without a cause (N-trace): the instruction at its EPC is
# in the execlog if it was fetched, but it did not retire (ecall, ebreak,
# a fault), so the decoded trace skips one execlog entry or none.
UNKNOWN_SKIP = -1
MAX_CANDIDATES = 100000
CONTEXT = 6


class Segment:
    def __init__(self, start_line):
        self.addrs = []
        self.skips = []     # non-retired instructions before each one
        self.events = []    # (index, text) for context
        self.start_line = start_line
        self.end_reason = 'end of trace'


def parse_fields(words):
    fields = {}
    for w in words:
        key, _, value = w.partition('=')
        fields[key] = value
    return fields


def landing_pad_fault(fields):
    return (int(fields['cause']) == SW_CHECK and
            int(fields.get('tvalepc', '-1'), 0) == SW_CHECK_LANDING_PAD)


def read_decoded(path):
    segments = []
    seg = None
    pending_skip = 0
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if line.startswith('['):
                line = line.split('] ', 1)[1]
            if not line.startswith('#'):
                if seg is None:
                    seg = Segment(lineno)
                    segments.append(seg)
                seg.addrs.append(int(line, 16))
                seg.skips.append(pending_skip)
                pending_skip = 0
                continue
            words = line[1:].split()
            if words and words[0].startswith('['):
                words = words[1:]
            kind, fields = words[0], parse_fields(words[1:])
            if seg is not None:
                seg.events.append((len(seg.addrs), ' '.join(words)))
            if kind == 'trap' and fields.get('kind') == 'exception':
                if 'cause' not in fields or landing_pad_fault(fields):
                    pending_skip = UNKNOWN_SKIP
                elif int(fields['cause']) not in FETCH_FAULTS | RETIRED_TRAPS:
                    pending_skip += 1
            elif kind in ('gap', 'end', 'error'):
                if seg is not None:
                    seg.end_reason = ' '.join(words)
                seg = None
                pending_skip = 0
    return segments


# The start of an execlog record.  Each record is written in one piece,
# but its newline separately: with several vCPUs, records of different
# harts may share a line.  The hart is one digit: a record can end with
# a memory region name that ends in digits ("anon53673060"), and with a
# longer number the next record's hart would take them in.
RECORD = re.compile(r'(\d), 0x([0-9a-f]+), (0x[0-9a-f]+, "[^"]*")')


def read_execlog(path, hart):
    addrs, texts = [], []
    prefix = '%d, ' % hart
    with open(path, errors='replace') as f:
        for line in f:
            if line.count('"') == 2:
                if line.startswith(prefix):
                    parts = line.split(', ', 3)
                    addrs.append(int(parts[1], 16))
                    texts.append(', '.join(parts[2:4]).rstrip('\n')[:60])
                continue
            for m in RECORD.finditer(line):
                if int(m.group(1)) == hart:
                    addrs.append(int(m.group(2), 16))
                    texts.append(m.group(3)[:60])
    return addrs, texts


def skip_to(seg, ex, i, j):
    """The execlog position of seg's instruction i, expected at j."""
    if seg.skips[i] == UNKNOWN_SKIP:
        if (j >= len(ex) or ex[j] != seg.addrs[i]) and j + 1 < len(ex) and \
                ex[j + 1] == seg.addrs[i]:
            return j + 1
        return j
    return j + seg.skips[i]


def match_at(seg, ex, start):
    """Match seg at execlog position start: (end, None) or (None, (i, j))."""
    j = start
    for i, addr in enumerate(seg.addrs):
        if i:   # the first one is where the segment was found
            j = skip_to(seg, ex, i, j)
        if j >= len(ex) or ex[j] != addr:
            return None, (i, j)
        j += 1
    return j, None


def find_segment(seg, ex, cursor, anchored):
    """First position >= cursor where the whole segment matches."""
    best = None
    first = seg.addrs[0]
    tried = 0
    pos = cursor
    while pos < len(ex) and tried < MAX_CANDIDATES:
        if ex[pos] == first:
            tried += 1
            end, miss = match_at(seg, ex, pos)
            if end is not None:
                return pos, end, None
            if best is None or miss[0] > best[1][0]:
                best = (pos, miss)
        if anchored:
            break
        pos += 1
    return None, None, best


def segment_positions(seg, ex, start):
    """The execlog positions of seg's instructions, found at start."""
    pos, j = [], start
    for i in range(len(seg.addrs)):
        if i:
            j = skip_to(seg, ex, i, j)
        pos.append(j)
        j += 1
    return pos


def check_filter_range(ex, texts, covered, lo, hi):
    """Decoded = the execlog's instructions in [lo, hi), all of them."""
    for j in sorted(covered):
        if not lo <= ex[j] < hi:
            print('FAIL: execlog entry %d (0x%x %s) was decoded but lies '
                  'outside the filtered range' % (j, ex[j], texts[j]))
            return False
    for j, addr in enumerate(ex):
        if lo <= addr < hi and j not in covered:
            print('FAIL: execlog entry %d (0x%x %s) lies in the filtered '
                  'range but was not decoded' % (j, addr, texts[j]))
            return False
    print('  filter range [0x%x, 0x%x): the %d decoded instructions are '
          'exactly the executed ones in it' % (lo, hi, len(covered)))
    return True


def show_mismatch(seg, ex, texts, best, number):
    print('FAIL: segment %d (decoded line %d, %d instructions) does not '
          'match the execlog' % (number, seg.start_line, len(seg.addrs)))
    if best is None:
        print('  its first address 0x%x is never executed after the '
              'previous segment' % seg.addrs[0])
        return
    start, (i, j) = best
    print('  best candidate: execlog entry %d; first difference at decoded '
          'instruction %d, execlog entry %d' % (start, i, j))
    events = dict(seg.events)
    print('  %-28s | %s' % ('decoded', 'execlog'))
    for k in range(-CONTEXT, CONTEXT + 1):
        di, dj = i + k, j + k
        d = '0x%x' % seg.addrs[di] if 0 <= di < len(seg.addrs) else ''
        if di in events:
            d += ' [' + events[di][:20] + ']'
        e = ('0x%x %s' % (ex[dj], texts[dj])) if 0 <= dj < len(ex) else ''
        print('%s %-28s | %s' % ('>' if k == 0 else ' ', d, e))


def main(argv=None):
    ap = argparse.ArgumentParser(prog='compare.py')
    ap.add_argument('--execlog', required=True)
    ap.add_argument('--decoded', required=True)
    ap.add_argument('--hart', type=int, default=0, choices=range(10),
                    help='0 to 9 (see RECORD)')
    ap.add_argument('--from-start', action='store_true',
                    help='the first segment starts at the first execlog '
                         'instruction')
    ap.add_argument('--segments', type=int,
                    help='exact number of segments expected')
    ap.add_argument('--min-insns', type=int, default=1,
                    help='at least this many decoded instructions')
    ap.add_argument('--min-segments', type=int, default=1,
                    help='at least this many segments (gaps + 1)')
    ap.add_argument('--min-traps', type=int, default=0,
                    help='at least this many trap events')
    ap.add_argument('--filter-range', metavar='LO:HI',
                    help='the trace holds exactly the executed '
                         'instructions with LO <= address < HI')
    ap.add_argument('--max-missing', type=int, default=None,
                    help='at most this many executed instructions between '
                         'segments (lost trace)')
    args = ap.parse_args(argv)

    segments = read_decoded(args.decoded)
    ex, texts = read_execlog(args.execlog, args.hart)
    total = sum(len(s.addrs) for s in segments)
    traps = sum(1 for s in segments for _, e in s.events
                if e.startswith('trap'))
    skips = sum(sum(k for k in s.skips if k > 0) for s in segments)
    print('execlog: %d instructions of hart %d; decoded: %d instructions in '
          '%d segments, %d traps, %d non-retired' %
          (len(ex), args.hart, total, len(segments), traps, skips))
    ok = True
    cursor = 0
    missing = 0
    covered = set()
    for n, seg in enumerate(segments, 1):
        anchored = n == 1 and args.from_start
        start, end, best = find_segment(seg, ex, cursor, anchored)
        if start is None:
            show_mismatch(seg, ex, texts, best, n)
            return 1
        if n > 1:
            missing += start - cursor
        print('  segment %d: %d instructions = execlog [%d, %d) '
              '(%d before it); ends with: %s' %
              (n, len(seg.addrs), start, end, start - cursor,
               seg.end_reason))
        cursor = end
        covered.update(segment_positions(seg, ex, start))
    print('  after the last segment: %d execlog instructions' %
          (len(ex) - cursor))
    errors = [s for s in segments if s.end_reason.startswith('error')]
    if errors:
        print('FAIL: the decoder reported %d errors' % len(errors))
        ok = False
    if args.segments is not None and len(segments) != args.segments:
        print('FAIL: %d segments, expected %d' %
              (len(segments), args.segments))
        ok = False
    if len(segments) < args.min_segments:
        print('FAIL: %d segments, expected at least %d' %
              (len(segments), args.min_segments))
        ok = False
    if total < args.min_insns:
        print('FAIL: %d instructions decoded, expected at least %d' %
              (total, args.min_insns))
        ok = False
    if traps < args.min_traps:
        print('FAIL: %d traps decoded, expected at least %d' %
              (traps, args.min_traps))
        ok = False
    if args.filter_range:
        lo, hi = (int(v, 0) for v in args.filter_range.split(':'))
        ok &= check_filter_range(ex, texts, covered, lo, hi)
    if args.max_missing is not None and missing > args.max_missing:
        print('FAIL: %d executed instructions fall between segments, at '
              'most %d expected' % (missing, args.max_missing))
        ok = False
    print('PASS' if ok else 'FAIL')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
