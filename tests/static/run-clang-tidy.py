#!/usr/bin/env python3
# clang-tidy over skilld/ and skillctl/ as the build compiles them (compile_commands.json), for
# meson test --suite static. The checks are the ones .clang-tidy at the top of the tree picks
# (with its reasons); here every finding is an error. Exit 77 (skip) when clang-tidy is not
# installed.
#
# A file whose translation unit passed before is not analysed again: a clean verdict is kept in
# a cache (SKILLD_CLANG_TIDY_CACHE, default $XDG_CACHE_HOME/skilld/clang-tidy) under a digest of
# everything the verdict depends on: clang-tidy's version, .clang-tidy, the file's compile
# command and its preprocessed text (with every header it includes and their paths within the
# tree, so another checkout of the same tree finds them). Findings
# are never cached, so they show on every run; SKILLD_CLANG_TIDY_CACHE=off analyses everything.
#
#   run-clang-tidy.py BUILD_DIR [CLANG_TIDY]

import concurrent.futures
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

DIRS = ('/skilld/', '/skillctl/')
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_dir():
    d = os.environ.get('SKILLD_CLANG_TIDY_CACHE')
    if d == 'off':
        return None
    if not d:
        d = os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'),
                         'skilld', 'clang-tidy')
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return d


def preprocess_argv(entry):
    """The entry's compile command turned into one that prints the preprocessed text."""
    argv = entry['arguments'] if 'arguments' in entry else shlex.split(entry['command'])
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ('-o', '-MF', '-MQ', '-MT'):
            skip = True
        elif a not in ('-c', '-MD', '-MMD'):
            out.append(a)
    # -C: comments too, since a NOLINT in one changes the verdict.
    return out + ['-E', '-C', '-o', '-']


def verdict_key(stamp, entry):
    """A digest of all a clean verdict on ENTRY depends on, or None where it cannot be had. The
    paths of the source and build trees are left out, so that another checkout of the same tree
    (CI's clone) finds the verdicts of this one."""
    p = subprocess.run(preprocess_argv(entry), cwd=entry['directory'], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        return None
    h = hashlib.sha256(stamp)
    for text in (json.dumps(entry, sort_keys=True).encode(), p.stdout):
        h.update(text.replace(entry['directory'].encode(), b'@BUILD@').replace(SOURCE.encode(), b'@SOURCE@'))
    return h.hexdigest()


def main():
    build = os.path.abspath(sys.argv[1])
    tidy = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else (
        shutil.which('clang-tidy-14') or shutil.which('clang-tidy'))
    if not tidy:
        print('clang-tidy is not installed: skipping', file=sys.stderr)
        return 77

    with open(os.path.join(build, 'compile_commands.json')) as f:
        db = json.load(f)
    entries = {}
    for e in db:
        path = os.path.normpath(os.path.join(e['directory'], e['file']))
        if any(d in path for d in DIRS):
            entries.setdefault(path, e)
    files = sorted(entries)
    if not files:
        print('no sources of skilld/ or skillctl/ in the compilation database', file=sys.stderr)
        return 1

    cache = cache_dir()
    stamp = b''
    if cache:
        version = subprocess.run([tidy, '--version'], stdout=subprocess.PIPE, check=True).stdout
        with open(os.path.join(SOURCE, '.clang-tidy'), 'rb') as f:
            stamp = version + b'\0' + f.read() + b'\0'

    def run(path):
        key = verdict_key(stamp, entries[path]) if cache else None
        if key and os.path.exists(os.path.join(cache, key)):
            return path, 0, '', True
        # The database is gcc's: let clang pass over gcc-only warning flags.
        p = subprocess.run([tidy, '-p', build, '--quiet', '--warnings-as-errors=*',
                            '--extra-arg=-Wno-unknown-warning-option', path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode == 0 and key:
            # Atomically: a verdict half-written by a killed run must not read as one.
            fd, tmp = tempfile.mkstemp(dir=cache)
            os.close(fd)
            os.replace(tmp, os.path.join(cache, key))
        return path, p.returncode, p.stdout, False

    failed = kept = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for path, rc, out, cached in pool.map(run, files):
            kept += cached
            # "N warnings generated" counts what was filtered out, too: only show findings.
            lines = [l for l in out.splitlines() if not l.endswith(' generated.')]
            if rc != 0:
                failed += 1
                print('\n'.join(lines))
    print('clang-tidy: %d file%s checked (%d clean as before, unchanged), %d with findings'
          % (len(files), '' if len(files) == 1 else 's', kept, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
