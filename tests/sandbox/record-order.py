#!/usr/bin/python3
"""Checks the order of the run record's syncs in an `strace -f -y` trace of `skillctl run`, and
the state a run killed in its middle leaves (tests/sandbox/test-skillctl-run.sh).

  record-order.py trace TRACE DIR    every log with bytes and result.json's temporary file synced
                                     (the call returned) before result.json's rename began, and
                                     DIR synced after the rename returned
  record-order.py killed DIR         a result.json in DIR vouches for whole logs beside it: each
                                     log holds exactly the stream result.json reports

The promise checked is man/skillctl.1's: result.json comes last, synced with the logs before it,
its name durable before the run returns. Exit status 0 when it holds, 1 (and why) when not.
"""

import json
import os
import re
import sys

CALL = re.compile(r"^(\d+) +(\w+)\((.*)$")
RESUMED = re.compile(r"^(\d+) +<\.\.\. (\w+) resumed>.*= (-?\d+)")
DONE = re.compile(r"= (-?\d+)(?: \w+ \(.*\))?$")
FD_PATH = re.compile(r"^\d+<(.*?)>")


def events(path):
    """(kind, call, args, pid) in the order strace saw them: kind "start" or "end" (with the
    return value); a call not interrupted gives both at once."""
    pending = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = RESUMED.match(line)
            if m:
                pid, call, rv = m.group(1), m.group(2), int(m.group(3))
                yield ("end", call, pending.pop((pid, call), ""), rv)
                continue
            m = CALL.match(line)
            if not m:
                continue
            pid, call, rest = m.groups()
            yield ("start", call, rest, None)
            if rest.endswith("<unfinished ...>"):
                pending[(pid, call)] = rest
            else:
                d = DONE.search(rest)
                yield ("end", call, rest, int(d.group(1)) if d else None)


def check_trace(trace, outdir):
    outdir = os.path.realpath(outdir)
    synced = set()            # paths whose fsync() returned 0
    renaming = renamed = dir_sync = False
    for kind, call, args, rv in events(trace):
        if call == "fsync":
            m = FD_PATH.match(args)
            path = m.group(1) if m else ""
            if kind == "start" and renamed and path == outdir:
                dir_sync = True
            elif kind == "end" and rv == 0:
                if dir_sync and path == outdir:
                    return None
                synced.add(path)
        elif call.startswith("rename") and '"result.json"' in args:
            if kind == "start" and not renaming:
                renaming = True
                tmp = re.search(r'"(\.#result\.json\.[^"]+)"', args)
                need = [os.path.join(outdir, n) for n in ("stdout.log", "stderr.log")
                        if os.path.getsize(os.path.join(outdir, n)) > 0]
                if not tmp:
                    return f"result.json renamed from an unexpected name: {args}"
                need.append(os.path.join(outdir, tmp.group(1)))
                missing = [p for p in need if p not in synced]
                if missing:
                    return f"result.json renamed before these were synced: {missing}"
            elif kind == "end" and renaming and not renamed:
                if rv != 0:
                    return "result.json's rename failed"
                renamed = True
    if not renamed:
        return "no rename of result.json in the trace"
    return "the directory was not synced after result.json's rename"


def check_killed(outdir):
    path = os.path.join(outdir, "result.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        result = json.load(f)
    for stream in ("stdout", "stderr"):
        with open(os.path.join(outdir, f"{stream}.log"), encoding="utf-8") as f:
            text = f.read()
        if text != result[stream]["text"]:
            return f"{stream}.log holds {text!r}, result.json says {result[stream]['text']!r}"
    return None


def main():
    if sys.argv[1] == "trace":
        why = check_trace(sys.argv[2], sys.argv[3])
    else:
        why = check_killed(sys.argv[2])
    if why:
        print(why)
        sys.exit(1)


if __name__ == "__main__":
    main()
