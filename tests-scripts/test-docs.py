#!/usr/bin/python3
"""
The documentation is valid reStructuredText: every docs/*.rst (and the
QEMU docs in docs/qemu/) parses with docutils without a warning, the
Sphinx-only roles and directives aside.  QEMU's Sphinx build would
reject a malformed table or an inconsistent title level; this catches
them without Sphinx.

    test-docs.py DOCS_DIR...        (TAP on stdout)
"""
import io
import pathlib
import sys

import docutils.core

# Sphinx adds these; plain docutils does not know them.
SPHINX_ONLY = ('Unknown interpreted text role', 'Unknown directive type',
               'No role entry for', 'No directive entry for')


def problems(path):
    stream = io.StringIO()
    docutils.core.publish_doctree(
        path.read_text(), source_path=str(path),
        settings_overrides={'report_level': 2, 'halt_level': 5,
                            'warning_stream': stream})
    return [line for line in stream.getvalue().splitlines()
            if any(k in line for k in ('WARNING', 'ERROR', 'SEVERE'))
            and not any(s in line for s in SPHINX_ONLY)]


def main(dirs):
    files = sorted(f for d in dirs for f in pathlib.Path(d).glob('*.rst'))
    print('1..%d' % len(files))
    failed = 0
    for n, f in enumerate(files, 1):
        found = problems(f)
        print('%s %d - %s' % ('not ok' if found else 'ok', n, f.name))
        for line in found:
            print('# ' + line)
        failed += bool(found)
    return 1 if failed or not files else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
