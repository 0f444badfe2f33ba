#!/usr/bin/python3
"""What each process of one command makes in system calls, from the kernel's own trace (issue 15).

Runs COMMAND once with the kernel's raw_syscalls events on for it and every process it forks
(ftrace's set_event_pid with event-fork; as root, where /sys/kernel/tracing is), then prints,
for each process in the order they started, how many calls of each kind it made and how long the
kernel took in them. With --calls PID (or --calls init: the process that calls pivot_root(),
the sandbox init) every call of that process follows, one per line: its start, the time since
the end of the call before (user space, or the wait for the CPU), its length, name and result.

The trace costs about half a microsecond per call (two events), far less than strace's stops,
so the shape of a run stays what it is without it; lengths under a few microseconds still carry
that overhead. A benchmark's tool, not a test: nothing is asserted.

Usage: bench/syscall-trace.py [--calls PID|init] COMMAND [ARG...]
  e.g. bench/syscall-trace.py --calls init build/skillctl/skillctl run --local -q \\
           --output-dir /tmp/out SKILL
"""

import collections
import re
import subprocess
import sys

TRACING = "/sys/kernel/tracing"
EVENT = re.compile(r"\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)")


def syscall_names():
    names = {}
    with open("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") as f:
        for line in f:
            m = re.match(r"#define __NR_(\w+) (\d+)", line)
            if m:
                names[int(m.group(2))] = m.group(1)
    return names


def write(path, value):
    with open(f"{TRACING}/{path}", "w") as f:
        f.write(value)


def trace(argv):
    """Runs argv under the trace; returns the trace's text."""
    write("tracing_on", "0")
    write("trace", "")
    write("buffer_size_kb", "16384")
    write("options/event-fork", "1")
    write("events/enable", "0")
    for event in ("raw_syscalls/sys_enter", "raw_syscalls/sys_exit"):
        write(f"events/{event}/enable", "1")
    # The child puts itself in set_event_pid before it execs, so the trace starts with COMMAND.
    script = f'echo $$ > {TRACING}/set_event_pid && echo 1 > {TRACING}/tracing_on && exec "$@"'
    try:
        subprocess.run(["/bin/sh", "-c", script, "sh"] + argv, stdout=subprocess.DEVNULL)
    finally:
        write("tracing_on", "0")
        with open(f"{TRACING}/trace") as f:
            text = f.read()
        write("events/enable", "0")
        write("set_event_pid", "")
        write("trace", "")
    return text


def main():
    args = sys.argv[1:]
    which = None
    if len(args) >= 2 and args[0] == "--calls":
        which, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    names = syscall_names()
    calls = collections.defaultdict(list)  # pid -> [start, end, name, result]
    order = []
    for line in trace(args).splitlines():
        m = EVENT.match(line)
        if not m:
            continue
        _, pid, ts, event, rest = m.groups()
        pid, ts = int(pid), float(ts)
        if pid not in calls:
            order.append(pid)
        if event == "sys_enter":
            nr = int(re.search(r"NR (\d+)", rest).group(1))
            calls[pid].append([ts, None, names.get(nr, str(nr)), None])
        elif event == "sys_exit" and calls[pid] and calls[pid][-1][1] is None:
            calls[pid][-1][1] = ts
            calls[pid][-1][3] = int(re.search(r"= (-?\d+)", rest).group(1))
    for pid in order:
        count, spent = collections.Counter(), collections.Counter()
        for start, end, name, _ in calls[pid]:
            count[name] += 1
            spent[name] += (end - start) * 1e6 if end else 0
        print(f"pid {pid}: {sum(count.values())} calls, {sum(spent.values()):.0f} us in the kernel")
        for name, n in count.most_common():
            print(f"  {name:<20} {n:>4} {spent[name]:>9.0f} us")
    if which == "init":
        # The process that pivots into a new root.
        found = [pid for pid in order if any(c[2] == "pivot_root" for c in calls[pid])]
        which = str(found[0]) if found else None
    if which:
        print(f"\ncalls of pid {which}: start, since the call before, length (us), name, result")
        before = None
        for start, end, name, result in calls[int(which)]:
            gap = (start - before) * 1e6 if before else 0
            length = (end - start) * 1e6 if end else 0
            before = end or start
            print(f"  {start:.6f} {gap:8.1f} {length:8.1f} {name} {result}")


if __name__ == "__main__":
    main()
