#!/usr/bin/env python3
#
# Data trace size on the workload guests: bits per access and per
# instruction (instruction packets only), from a decode of each trace.
#
#   scripts/bench-data-size.py QEMU E2E_WORKLOADS_ELF DECODER [ITERS]
#
# The e2e build of the workloads guest saves its RAM sink buffer on the
# serial line (tests-e2e/e2e_save.c); run-e2e.py's reader rebuilds it.
#
# Copyright (c) 2026 The rvpa authors
# SPDX-License-Identifier: GPL-2.0-or-later

import importlib.util
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    'run_e2e', os.path.join(HERE, '..', 'tests-e2e', 'run-e2e.py'))
run_e2e = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_e2e)

MODES = [('differential addresses', 1), ('full addresses', 2),
         ('addresses only', 3), ('data only', 4)]


def measure(qemu, elf, decoder, work, iters, mode):
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        out = subprocess.run(
            [qemu, '-M', 'virt,rvtrace=on', '-bios', 'none', '-display',
             'none', '-monitor', 'none', '-serial', 'stdio', '-cpu', 'rv64',
             '-semihosting-config', 'enable=on,target=native',
             '-kernel', elf, '-append',
             'work=%s iters=%d trace=0 data=%d' % (work, iters, mode)],
            stdout=subprocess.PIPE, text=True, check=True).stdout
        name, wp, wrapped = run_e2e.ram_traces(out)[0]
        if wrapped:
            return None
        s = subprocess.run([decoder, '-s', '-e', elf, name],
                           stdout=subprocess.PIPE, text=True,
                           check=True).stdout
        bpa = re.search(r'^data packets .* ([0-9.]+) bits per access', s,
                        re.M)
        bpi = re.search(r'^bits per instruction ([0-9.]+)', s, re.M)
        acc = re.search(r'^data accesses\s+(\d+)', s, re.M)
        return bpa.group(1), bpi.group(1), acc.group(1)


def main(argv):
    qemu, elf, decoder = (os.path.abspath(a) for a in argv[:3])
    iters = int(argv[3]) if len(argv) > 3 else 2
    print('Data trace size (%d iterations): bits per access, and bits per '
          'instruction of the instruction packets' % iters)
    print('%-24s %-10s %10s %12s %10s' % ('mode', 'workload', 'accesses',
                                          'bits/access', 'bits/insn'))
    for name, mode in MODES:
        for work in ('coremark', 'sort', 'recursion'):
            r = measure(qemu, elf, decoder, work, iters, mode)
            if r is None:
                print('%-24s %-10s %10s' % (name, work, 'wrapped'))
                continue
            bpa, bpi, acc = r
            print('%-24s %-10s %10s %12s %10s' % (name, work, acc, bpa, bpi))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
