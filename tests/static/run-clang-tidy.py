#!/usr/bin/env python3
# clang-tidy over skilld/ and skillctl/ as the build compiles them (compile_commands.json), for
# meson test --suite static. The checks are the ones .clang-tidy at the top of the tree picks
# (with its reasons); here every finding is an error. Exit 77 (skip) when clang-tidy is not
# installed.
#
#   run-clang-tidy.py BUILD_DIR [CLANG_TIDY]

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

DIRS = ('/skilld/', '/skillctl/')


def main():
    build = os.path.abspath(sys.argv[1])
    tidy = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else (
        shutil.which('clang-tidy-14') or shutil.which('clang-tidy'))
    if not tidy:
        print('clang-tidy is not installed: skipping', file=sys.stderr)
        return 77

    with open(os.path.join(build, 'compile_commands.json')) as f:
        db = json.load(f)
    files = sorted({os.path.normpath(os.path.join(e['directory'], e['file'])) for e in db
                    if any(d in os.path.normpath(os.path.join(e['directory'], e['file']))
                           for d in DIRS)})
    if not files:
        print('no sources of skilld/ or skillctl/ in the compilation database', file=sys.stderr)
        return 1

    def run(path):
        # The database is gcc's: let clang pass over gcc-only warning flags.
        p = subprocess.run([tidy, '-p', build, '--quiet', '--warnings-as-errors=*',
                            '--extra-arg=-Wno-unknown-warning-option', path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return path, p.returncode, p.stdout

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for path, rc, out in pool.map(run, files):
            # "N warnings generated" counts what was filtered out, too: only show findings.
            lines = [l for l in out.splitlines() if not l.endswith(' generated.')]
            if rc != 0:
                failed += 1
                print('\n'.join(lines))
    print('clang-tidy: %d file%s checked, %d with findings'
          % (len(files), '' if len(files) == 1 else 's', failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
