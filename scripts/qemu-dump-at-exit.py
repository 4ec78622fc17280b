#!/usr/bin/python3
"""Run QEMU until the guest powers off, then save guest memory ranges.

    scripts/qemu-dump-at-exit.py [--dump ADDR:SIZE:FILE]... -- QEMU ARGS...

QEMU runs with -no-shutdown and a QMP socket of its own: when the guest
powers off (QMP event SHUTDOWN), the VM stops instead of exiting, each
range is written with pmemsave (guest physical addresses, as the memory
is at that moment), and QEMU quits.  The trace decoder reads those files
in place of images that the guest changed while it ran (code patched at
boot).  Exit status: QEMU's, or 1 when the guest never powered off.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def parse_args(argv):
    dumps = []
    while argv and argv[0] != '--':
        if argv[0] == '--dump' and len(argv) > 1:
            addr, size, path = argv[1].split(':', 2)
            dumps.append((int(addr, 0), int(size, 0), os.path.abspath(path)))
            argv = argv[2:]
        else:
            sys.exit(__doc__)
    if not argv or len(argv) < 2:
        sys.exit(__doc__)
    return dumps, argv[1:]


class Qmp:
    def __init__(self, path, proc):
        for _ in range(600):
            if proc.poll() is not None:
                sys.exit('qemu-dump-at-exit: QEMU exited before QMP was up')
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit('qemu-dump-at-exit: no QMP socket')
        self.file = self.sock.makefile('rw')
        self.read()                              # the greeting
        self.command('qmp_capabilities')

    def read(self):
        line = self.file.readline()
        if not line:
            return None
        return json.loads(line)

    def command(self, name, **args):
        self.file.write(json.dumps({'execute': name, 'arguments': args}))
        self.file.write('\n')
        self.file.flush()
        while True:
            msg = self.read()
            if msg is None:
                return None
            if 'return' in msg:
                return msg['return']
            if 'error' in msg:
                sys.exit('qemu-dump-at-exit: %s: %s' %
                         (name, msg['error'].get('desc')))

    def wait_event(self, name):
        while True:
            msg = self.read()
            if msg is None or msg.get('event') == name:
                return msg


def main():
    dumps, cmd = parse_args(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, 'qmp.sock')
        proc = subprocess.Popen(cmd + ['-no-shutdown', '-qmp',
                                       'unix:%s,server=on,wait=off' % sock])
        qmp = Qmp(sock, proc)
        if qmp.wait_event('SHUTDOWN') is None:
            proc.wait()
            return 1
        for addr, size, path in dumps:
            qmp.command('pmemsave', val=addr, size=size, filename=path)
        qmp.command('quit')
        return proc.wait()


if __name__ == '__main__':
    sys.exit(main())
