#!/usr/bin/python3
"""
The documentation is valid reStructuredText: every docs/*.rst (and the
QEMU docs in docs/qemu/) parses with docutils without a warning, the
Sphinx-only roles and directives aside.  QEMU's Sphinx build would
reject a malformed table or an inconsistent title level; this catches
them without Sphinx.  And every script the documents name as a
command (``scripts/NAME.sh`` or ``.py``, beside the first DOCS_DIR) is
executable, so that it runs as written.

    test-docs.py DOCS_DIR...        (TAP on stdout)
"""
import io
import os
import pathlib
import re
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


def scripts_named(root, files):
    """The scripts/... commands the documents (and the README) name."""
    texts = [f.read_text() for f in files]
    readme = root / 'README.md'
    if readme.exists():
        texts.append(readme.read_text())
    return sorted({m for t in texts
                   for m in re.findall(r'scripts/[\w.-]+\.(?:sh|py)\b', t)
                   if (root / m).is_file()})


def main(dirs):
    files = sorted(f for d in dirs for f in pathlib.Path(d).glob('*.rst'))
    root = pathlib.Path(dirs[0]).resolve().parent
    scripts = scripts_named(root, files)
    print('1..%d' % (len(files) + len(scripts)))
    failed = 0
    for n, f in enumerate(files, 1):
        found = problems(f)
        print('%s %d - %s' % ('not ok' if found else 'ok', n, f.name))
        for line in found:
            print('# ' + line)
        failed += bool(found)
    for n, script in enumerate(scripts, len(files) + 1):
        runs = os.access(root / script, os.X_OK)
        print('%s %d - %s is executable' % ('ok' if runs else 'not ok', n,
                                            script))
        failed += not runs
    return 1 if failed or not files else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
