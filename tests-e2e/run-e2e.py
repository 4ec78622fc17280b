#!/usr/bin/env python3
# One end-to-end trace test: run a guest under QEMU with tracing on and
# the execlog plugin, capture the trace, decode it with the guest ELF and
# compare the decoded instructions with the execlog (compare.py).
#
#   run-e2e.py --qemu QEMU --plugin libexeclog.so --decoder rvtrace-decode
#              --elf GUEST.elf --cpu rv64 --capture ram|pib [options]
#
# Capture:
#   ram  the guest traces into its harts' RAM sinks and saves them
#        (tests-e2e/e2e_guest.h: trace-hartN.bin by semihosting); a
#        wrapped buffer is decoded with --wrap and
#        the options of the guest's trace=F (its support packet is gone);
#   pib  -machine rvtrace-chardev: every hart traces from reset with the
#        default options into one file; the reset vector (MROM) is saved
#        first (pmemsave) so that the decoder can follow it.
#
# --migrate-after S: S seconds into the run, the VM migrates (`migrate
# "exec:cat > vm.state"`) to a second QEMU started with -incoming, which
# runs it to its end.  Each QEMU writes its own execlog (and with pib its
# own trace file); the two of each are joined, so that the trace must
# decode as one across the migration.  With ram the buffer in guest
# memory migrates with the VM.
#
# A guest command line with ntrace=M traces in N-trace (trTeInstMode M);
# the decoder is then run with --format ntrace.
#
# --rnmi SYMBOL: the hart's RNMI vector is the guest's SYMBOL
# (rnmi-interrupt-vector, found with nm).  Once the guest prints
# "rnmi: ready" its RNMI line is raised through the qtest protocol
# (set_irq_in on a socket; TCG still runs the guest), as nothing on virt
# raises it; when the guest's word rnmi_taken is not 0 the line is
# lowered and its word rnmi_release set (tests-e2e/e2e_rnmi.c).
#
# The test passes when QEMU's guest passes, the decoder exits with 0 and
# every hart's decoded trace matches its execlog.  On failure the files
# stay in --workdir for inspection.
#
# SPDX-License-Identifier: GPL-2.0-or-later

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402

QEMU_TIMEOUT = 240
# trap vectors of the rvtest library, for implicit exception mode
TVEC = ['--tvec', 'M=rv_trap_entry_m', '--tvec', 'S=rv_trap_entry_hs']


def log(*args):
    print(*args, flush=True)


def run(cmd, **kw):
    log('$ ' + ' '.join(cmd))
    return subprocess.run(cmd, **kw)


def machine(args):
    m = 'virt,rvtrace=on'
    if args.capture == 'pib':
        m += ',rvtrace-chardev=tr'
    return m


def qemu_base(args, trace='trace.bin'):
    cmd = [args.qemu, '-M', machine(args), '-bios', 'none',
           '-display', 'none', '-cpu', args.cpu, '-smp', str(args.smp),
           '-kernel', args.elf]
    if args.capture == 'pib':
        cmd += ['-chardev', 'file,id=tr,path=' + trace]
    else:
        cmd += ['-semihosting-config', 'enable=on,target=native']
    if args.append:
        cmd += ['-append', args.append]
    return cmd + args.qemu_arg


def save_rom(args):
    """The reset vector the harts run first, for the decoder."""
    cmd = qemu_base(args) + ['-S', '-monitor', 'stdio', '-serial', 'none']
    run(cmd, input='pmemsave 0x1000 0x100 "rom.bin"\nquit\n', text=True,
        stdout=subprocess.DEVNULL, timeout=60, check=True)
    if not os.path.exists('rom.bin'):
        raise RuntimeError('pmemsave did not write rom.bin')


def symbol_addresses(elf, names):
    """The addresses of the symbols names in elf (the toolchain's nm)."""
    out = subprocess.run(['riscv64-unknown-elf-nm', elf], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] in names:
            found[fields[2]] = int(fields[0], 16)
    missing = [n for n in names if n not in found]
    if missing:
        raise RuntimeError('%s: no symbol %s' % (elf, ', '.join(missing)))
    return [found[n] for n in names]


def qtest_command(sock, command):
    """One qtest protocol command; its answer must be OK.  The answer."""
    sock.sendall((command + '\n').encode())
    answer = b''
    while not answer.endswith(b'\n'):
        chunk = sock.recv(256)
        if not chunk:
            raise RuntimeError('qtest: the connection closed')
        answer += chunk
    if not answer.startswith(b'OK'):
        raise RuntimeError('qtest: %s: %s' % (command, answer.decode()))
    return answer.decode().split()


def raise_rnmi(args):
    """Raise hart 0's RNMI line until its handler has taken it."""
    irq = 'set_irq_in /machine/soc0/harts[0] riscv.cpu.rnmi 0 '
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect('qtest.sock')
        qtest_command(sock, irq + '1')
        deadline = time.time() + QEMU_TIMEOUT / 2
        while int(qtest_command(sock, 'readl 0x%x' %
                                args.rnmi_taken)[1], 16) == 0:
            if time.time() > deadline:
                raise RuntimeError('the RNMI was not taken')
            time.sleep(0.001)
        qtest_command(sock, irq + '0')
        qtest_command(sock, 'writel 0x%x 1' % args.rnmi_release)


def run_guest_rnmi(args, cmd):
    """
    The guest's run, with the hart's RNMI raised once the guest says it
    is ready (raise_rnmi()); the exit status and the serial output.
    """
    cmd = cmd + ['-accel', 'tcg', '-qtest-log', 'none',
                 '-qtest', 'unix:qtest.sock,server=on,wait=off']
    log('$ ' + ' '.join(cmd))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         errors='replace')
    out = []
    try:
        for line in p.stdout:
            out.append(line)
            if line.startswith('rnmi: ready'):
                raise_rnmi(args)
        p.wait(timeout=QEMU_TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, ''.join(out)


def run_guest(args):
    cmd = qemu_base(args) + ['-monitor', 'none', '-serial', 'stdio']
    if args.full_speed:
        cmd += ['-trace', 'riscv_trace_encoder_wait,file=events.log']
    else:
        cmd += ['-plugin', args.plugin, '-d', 'plugin', '-D', 'exec.log']
    if args.memlog:
        cmd += ['-plugin', args.memlog + ',out=memlog.txt']
    if args.rnmi:
        returncode, stdout = run_guest_rnmi(args, cmd)
    else:
        p = run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, errors='replace', timeout=QEMU_TIMEOUT)
        returncode, stdout = p.returncode, p.stdout
    with open('serial.txt', 'w') as f:
        f.write(stdout)
    for line in stdout.splitlines():
        log('guest: ' + line)
    if returncode != 0:
        raise RuntimeError('the guest failed (QEMU exit status %d)' %
                           returncode)
    return stdout


def join_files(out, parts):
    with open(out, 'wb') as f:
        for part in parts:
            with open(part, 'rb') as p:
                shutil.copyfileobj(p, f)


def migrate_source(p):
    """
    Migrate QEMU p (its HMP monitor on stdin and stdout) to vm.state and
    quit it; returns what the monitor printed.  HMP's migrate may return
    while the run state is still finish-migrate (the migration completed,
    the state not yet changed), so the status is asked again until it is
    postmigrate, for up to a minute.
    """
    out = []
    deadline = time.monotonic() + 60
    try:
        p.stdin.write('migrate "exec:cat > vm.state"\n')
        while True:
            p.stdin.write('info status\n')
            p.stdin.flush()
            status = ''
            while not status:
                line = p.stdout.readline()
                if not line:
                    break               # QEMU ended
                out.append(line)
                if 'VM status' in line:
                    status = line
            if ('postmigrate' in status or not status or
                    time.monotonic() > deadline):
                break
            time.sleep(0.1)
    except BrokenPipeError:
        pass
    rest, _ = p.communicate('quit\n', timeout=QEMU_TIMEOUT)
    return ''.join(out) + rest


def run_migrated(args):
    """
    The guest's run on two QEMUs, migrated after args.migrate_after
    seconds; trace.bin and exec.log are the two halves joined.
    """
    execlog = ['-plugin', args.plugin, '-d', 'plugin']
    cmd = (qemu_base(args, 'trace-a.bin') + execlog +
           ['-D', 'exec-a.log', '-monitor', 'stdio',
            '-serial', 'file:serial-a.txt'])
    log('$ ' + ' '.join(cmd))
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    time.sleep(args.migrate_after)
    out = migrate_source(p)
    with open('monitor-a.txt', 'w') as f:
        f.write(out)
    with open('serial-a.txt') as f:
        if 'PASS' in f.read():
            raise RuntimeError('the guest ended before the migration: '
                               'make its run longer')
    if 'postmigrate' not in out:
        raise RuntimeError('the source did not migrate:\n' + out)
    cmd = (qemu_base(args, 'trace-b.bin') + execlog +
           ['-D', 'exec-b.log', '-monitor', 'none', '-serial', 'stdio',
            '-incoming', 'exec:cat vm.state'])
    p = run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors='replace', timeout=QEMU_TIMEOUT)
    for line in p.stdout.splitlines():
        log('guest: ' + line)
    if p.returncode != 0:
        raise RuntimeError('the migrated guest failed (QEMU exit status %d)'
                           % p.returncode)
    if args.capture == 'pib':
        log('migrated: source trace %d bytes, destination %d bytes' %
            (os.path.getsize('trace-a.bin'), os.path.getsize('trace-b.bin')))
        join_files('trace.bin', ['trace-a.bin', 'trace-b.bin'])
    join_files('exec.log', ['exec-a.log', 'exec-b.log'])
    return p.stdout


SAVED = re.compile(r'e2e: hart (\d+) saved (\d+) bytes wp (\d+) wrapped (\d)')


def ram_traces(serial):
    """{hart: (file, wp, wrapped)} of the buffers the guest saved."""
    traces = {}
    for m in SAVED.finditer(serial):
        hart, length, wp, wrapped = map(int, m.groups())
        name = 'trace-hart%d.bin' % hart
        if os.path.getsize(name) != length:
            raise RuntimeError('%s: %d bytes, the guest saved %d' %
                               (name, os.path.getsize(name), length))
        traces[hart] = (name, wp, bool(wrapped))
    if not traces:
        raise RuntimeError('the guest saved no trace')
    return traces


def guest_features(args):
    m = re.search(r'(?:^| )trace=(\d+)', args.append or '')
    return m.group(1) if m else '0'


def ntrace_args(args):
    """
    The guest's ntrace=M selects N-trace; its implicit return setting is
    not in the stream, so the decoder is told (trace=F bits 3, 7:6).
    """
    if not re.search(r'(?:^| )ntrace=\d', args.append or ''):
        return []
    features = int(guest_features(args))
    if not features & 8:
        return ['--format', 'ntrace']
    mode = 'counter' if (features >> 6) & 3 == 1 else 'stack'
    return ['--format', 'ntrace', '--implicit-return=' + mode]


def decode(args, trace, out, extra):
    cmd = ([args.decoder, '-e', args.elf] + args.decode_arg + extra +
           ntrace_args(args))
    if int(guest_features(args)) & 2:   # implicit exception
        cmd += TVEC
    if os.path.exists('rom.bin'):
        cmd += ['-r', 'rom.bin@0x1000']
    cmd += [trace]
    with open(out, 'w') as f:
        p = run(cmd, stdout=f, stderr=subprocess.PIPE, text=True,
                timeout=QEMU_TIMEOUT)
    if p.stderr:
        log(p.stderr.rstrip())
    if p.returncode != 0:
        raise RuntimeError('the decoder failed (exit status %d)' %
                           p.returncode)


FILTER_RANGE = re.compile(r'e2e: filter range (0x[0-9a-f]+) (0x[0-9a-f]+)')


def compare_hart(args, decoded, hart, serial):
    cargs = ['--execlog', 'exec.log', '--decoded', decoded,
             '--hart', str(hart)] + args.compare_arg
    m = FILTER_RANGE.search(serial)
    if m:
        cargs += ['--filter-range', '%s:%s' % m.groups()]
    log('$ compare.py ' + ' '.join(cargs))
    return compare.main(cargs) == 0


def check_full_speed(decoded, min_insns):
    """
    Without the execlog plugin's slow-down the hart outruns the encoding
    thread: it must have waited for room, and the trace must still decode
    to at least the instructions the workload ran.
    """
    with open('events.log', errors='replace') as f:
        waits = sum('riscv_trace_encoder_wait' in line for line in f)
    with open(decoded) as f:
        summary = f.read()
    insns = sum(map(int, re.findall(r'^instructions\s+(\d+)', summary,
                                    re.M)))
    errors = sum(map(int, re.findall(r'^(?:errors|gaps)\s+(\d+)', summary,
                                     re.M)))
    log('full speed: the hart waited %d times; %d instructions decoded, '
        '%d errors and gaps' % (waits, insns, errors))
    return waits > 0 and insns >= min_insns and errors == 0


SOURCE_PREFIX = re.compile(r'^(# )?\[([0-9a-f]+)\] ')


def decode_all_sources(args, src_bits):
    """
    One decode of every source of a multi-hart stream: each hart's lines
    (by their "[ID] " prefix, in stream order) must be what decoding that
    source alone gives.
    """
    decode(args, 'trace.bin', 'decoded-all.txt', ['--src-bits', str(src_bits)])
    per = {}
    with open('decoded-all.txt') as f:
        for line in f:
            m = SOURCE_PREFIX.match(line)
            if m:
                per.setdefault(int(m.group(2), 16), []).append(line)
    ok = True
    for hart in range(args.smp):
        decode(args, 'trace.bin', 'decoded-one.txt',
               ['--src-bits', str(src_bits), '--src', str(hart)])
        with open('decoded-one.txt') as f:
            alone = [line for line in f if SOURCE_PREFIX.match(line)]
        same = per.get(hart, []) == alone
        log('all sources at once: hart %d, %d lines, %s' %
            (hart, len(alone), 'as alone' if same else 'DIFFERENT'))
        ok &= same and len(alone) > 0
    return ok


def run_test(args):
    ok = True
    if args.capture == 'pib':
        save_rom(args)
    serial = run_migrated(args) if args.migrate_after else run_guest(args)
    if args.capture == 'pib':
        src_bits = (args.smp - 1).bit_length()
        if args.smp > 1:
            ok &= decode_all_sources(args, src_bits)
        for hart in range(args.smp):
            out = 'decoded-hart%d.txt' % hart
            decode(args, 'trace.bin', out, ['--src-bits', str(src_bits),
                                            '--src', str(hart)])
            ok &= compare_hart(args, out, hart, serial)
        return ok
    for hart, (name, wp, wrapped) in sorted(ram_traces(serial).items()):
        extra = []
        if wrapped:
            extra = ['--wrap', str(wp), '--features', guest_features(args)]
        out = 'decoded-hart%d.txt' % hart
        if args.full_speed:
            decode(args, name, out, extra + ['--summary'])
            ok &= check_full_speed(out, args.full_speed)
        else:
            decode(args, name, out, extra)
            ok &= compare_hart(args, out, hart, serial)
        if args.memlog:
            ok &= compare_data(args, name, extra, hart)
    return ok


def compare_data(args, trace, extra, hart):
    """The decoded data accesses against the memlog plugin's log."""
    out = 'decoded-data-hart%d.json' % hart
    decode(args, trace, out, extra + ['--json'])
    cargs = ['--memlog', 'memlog.txt', '--decoded', out, '--hart',
             str(hart)] + args.compare_data_arg
    log('$ compare-data.py ' + ' '.join(cargs))
    p = run([sys.executable, os.path.join(HERE, 'compare-data.py')] + cargs,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log(p.stdout.rstrip())
    return p.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--qemu', required=True)
    ap.add_argument('--plugin', required=True)
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--elf', required=True)
    ap.add_argument('--cpu', required=True)
    ap.add_argument('--capture', choices=['ram', 'pib'], default='ram')
    ap.add_argument('--smp', type=int, default=1)
    ap.add_argument('--append')
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--qemu-arg', action='append', default=[])
    ap.add_argument('--decode-arg', action='append', default=[])
    ap.add_argument('--compare-arg', action='append', default=[])
    ap.add_argument('--full-speed', type=int, metavar='MIN_INSNS',
                    help='no execlog: check that the hart waited for the '
                    'encoder and that MIN_INSNS or more decode')
    ap.add_argument('--keep', action='store_true',
                    help='keep the files in --workdir when the test passes')
    ap.add_argument('--migrate-after', type=float, metavar='SECONDS',
                    help='migrate the VM to a second QEMU after SECONDS')
    ap.add_argument('--compare-data-arg', action='append', default=[])
    ap.add_argument('--memlog', metavar='PLUGIN',
                    help='data trace: log memory accesses with this plugin '
                    'and compare the decoded ones (compare-data.py)')
    ap.add_argument('--rnmi', metavar='SYMBOL',
                    help='the RNMI vector is SYMBOL; raise the RNMI when '
                    'the guest prints "rnmi: ready" (qtest protocol)')
    args = ap.parse_args()
    if args.memlog:
        args.memlog = os.path.abspath(args.memlog)
    for path in (args.qemu, args.plugin, args.decoder, args.elf):
        if not os.path.exists(path):
            log('run-e2e: %s: not found' % path)
            return 1
    args.qemu, args.plugin, args.decoder, args.elf = (
        os.path.abspath(p) for p in (args.qemu, args.plugin, args.decoder,
                                     args.elf))
    if args.rnmi:
        vector, args.rnmi_taken, args.rnmi_release = symbol_addresses(
            args.elf, [args.rnmi, 'rnmi_taken', 'rnmi_release'])
        args.cpu += ',rnmi-interrupt-vector=0x%x' % vector
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    os.chdir(args.workdir)
    try:
        ok = run_test(args)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        log('FAIL: %s' % e)
        ok = False
    if ok:
        os.chdir('/')
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
        log('e2e: PASS')
        return 0
    log('e2e: FAIL (files kept in %s)' % args.workdir)
    return 1


if __name__ == '__main__':
    sys.exit(main())
