#!/usr/bin/python3
"""Where an embedded run's fixed cost goes, phase by phase (issue 15).

Runs `skillctl -v run --local` of the trivial shell skill (the one bench/run-bench.sh times)
and of the Python example json-transform, ROUNDS times each, interleaved (and, given several
skillctl binaries, each of them in every round, in a shuffled order), and reads the engine's
"Run phases (ms):" debug line: CLOCK_MONOTONIC marks taken in the engine, the sandbox init and
the skill process (RunMark in skilld/sandbox/sandbox-internal.h). Prints the median length of
each span between two marks (SPANS below), the median whole run as the harness saw it, and
what lies outside the engine (process start-up until sandbox_run(), and after it until exit).

Usage: bench/phases.py [ROUNDS] [SKILLCTL...]      (defaults: 50, build/skillctl/skillctl)
Medians of spans do not add up to the median of the whole; the init's spans run beside the
engine's. A benchmark, not a test: nothing is asserted.
"""

import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT = '{"numbers": [1, 2, 3, 4], "text": "the quick brown fox"}'
LINE = re.compile(r"Run phases \(ms\):(.*)$", re.M)
# (label, from mark, to mark): the engine's path, then the init's and the skill process's,
# then the engine's again. A span whose marks a run lacks (an older build, a skipped phase) is
# left out of that run's figures.
SPANS = [
    ("ahead: asked for (skillctl) to sandbox_run()'s entry", "ahead", "enter"),
    ("ahead: fork() of the helper, in the caller", "ahead", "ahead-forked"),
    ("ahead: its helper's start (fork to first instruction)", "ahead", "ahead-begun"),
    ("ahead: its helper: the network namespace made", "ahead-begun", "ahead-netns"),
    ("ahead: asked for to the namespace made", "ahead", "ahead-netns"),
    ("ahead: made to taken (at the clone, or the release)", "ahead-netns", "ahead-taken"),
    ("engine: prepare (checks, backend, uid, argv, env)", "enter", "prepared"),
    ("engine: prepare: request, paths, namespaces checked", "enter", "checked"),
    ("engine: prepare: limit backend (v1: was cgroups)", "checked", "limits"),
    ("engine: prepare: uid locked (was: and NSS asked)", "limits", "identity"),
    ("engine: prepare: inputs, rlimits, argv, env, pipes", "identity", "prepared"),
    ("engine: clone3() (the namespaces)", "prepared", "cloned"),
    ("engine: init's CPU left; v1 cgroups made, sent", "cloned", "cgroups"),
    ("engine: the user database asked (before the release)", "cgroups", "uid-checked"),
    ("engine's thread: the network namespace made", "cloned", "netns"),
    ("engine: seccomp program, placing, release (after NSS)", "uid-checked", "released"),
    ("engine: seccomp program, placing, release", "cgroups", "released"),
    ("engine: the user database asked (after the release)", "released", "uid-checked"),
    ("engine: the network namespace made to the release", "netns", "released"),
    ("engine: clone3()'s return to the release", "cloned", "released"),
    ("init: scheduled after the clone", "cloned", "init-born"),
    ("init: fds closed (was: and v1 cgroups entered)", "init-born", "init-start"),
    ("init: session, loopback, fixed part of the root", "init-start", "init-early"),
    ("init: its v1 cgroups awaited and entered", "init-early", "init-placed"),
    ("init: held for the release, before the late part", "init-early", "init-go"),
    ("init: writable places, inputs, /proc, pivot", "init-go", "init-late"),
    ("init: in its v1 cgroups: writable places ... pivot", "init-placed", "init-late"),
    ("init: fixed root's end to the pivot (in place)", "init-early", "init-late"),
    ("init: clone3()'s return to its late part's end", "cloned", "init-late"),
    ("init: held for the release, after the late part", "init-late", "init-go"),
    ("init: fork of the skill process (now: verdict, drop, vfork)", "init-late", "init-forked"),
    ("init: fds closed, held for the uid's verdict", "init-late", "init-verdict"),
    ("init: uid change, capabilities, keyring", "init-verdict", "init-dropped"),
    ("init: vfork() of the skill process", "init-dropped", "init-forked"),
    ("skill process: stdio, limits, privileges, filter", "init-forked", "skill-exec"),
    ("skill process: stdio, limits, fds, privileges", "init-forked", "skill-setup"),
    ("skill process: stdio, limits, fds (to its uid change)", "init-forked", "skill-held"),
    ("skill process: held for the uid's verdict", "skill-held", "skill-verdict"),
    ("skill process: uid change, capabilities, keyring", "skill-verdict", "skill-setup"),
    ("clone3()'s return to the uid's verdict", "cloned", "uid-checked"),
    ("skill process: the seccomp filter loaded", "skill-setup", "skill-exec"),
    ("the skill (execve() to its reaping)", "skill-exec", "skill-end"),
    ("init: the rest killed and reaped, report sent", "skill-end", "init-empty"),
    ("engine: the report read", "init-empty", "exited"),
    ("engine: the init's exit seen (before: waited for)", "exited", "init-gone"),
    ("engine: pipes drained", "init-gone", "drained"),
    ("engine: pipes drained (after the report)", "exited", "drained"),
    ("engine: usage collected (after reaping, before)", "drained", "reaped"),
    ("engine: artifacts, logs, result.json written", "reaped", "written"),
    ("thread: the logs synced, from the drain", "drained", "logs-synced"),
    ("engine: written to the data durable (its syncs, or waits)", "written", "stored-logs"),
    ("engine: logs and result.json's data durable", "reaped", "stored-logs"),
    ("engine: result.json renamed, durable", "stored-logs", "stored"),
    ("engine: the init reaped (during the syncs)", "written", "init-reaped"),
    ("engine: the init reaped (after the store)", "stored", "init-reaped"),
    ("engine: cgroups removed (after the reaping)", "init-reaped", "removed"),
    ("engine: the init reaped to the return", "init-reaped", "done"),
    ("engine: result.json durable to the return", "stored", "done"),
    ("clone3()'s return to the skill's execve()", "cloned", "skill-exec"),
    ("clone3()'s call to the skill's execve()", "prepared", "skill-exec"),
    ("sandbox_run() from entry to the skill's execve()", "enter", "skill-exec"),
    ("sandbox_run() from the skill's end to its return", "skill-end", "done"),
]


def p90(values):
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def held_order_fits(label, marks):
    """An init in place from its start is released after its late part, others before it: each
    of the spans around the release counts the runs of its order only."""
    if "init-go" not in marks or "init-late" not in marks:
        return True
    after = marks["init-go"] > marks["init-late"]
    if "after the late part" in label or "(in place)" in label:
        return after
    if "before the late part" in label or label.startswith("init: writable places"):
        return not after
    return True


def verdict_order_fits(label, marks):
    """The engine asked the user database before the release (up to session 8), or after it: each
    of the spans around the two counts the runs of its order only."""
    if "uid-checked" not in marks or "released" not in marks:
        return True
    after = marks["uid-checked"] > marks["released"]
    if "(after the release)" in label:
        return after
    if "(before the release)" in label or "(after NSS)" in label:
        return not after
    if label == "engine: seccomp program, placing, release":
        return after
    return True


def reap_order_fits(label, marks):
    """The init is reaped during the store's syncs when its exit is complete by then, else after
    result.json is durable: each of the two spans counts the runs of its order only."""
    if "init-reaped" not in marks or "stored" not in marks:
        return True
    if "(during the syncs)" in label:
        return marks["init-reaped"] < marks.get("stored-logs", marks["stored"])
    if "(after the store)" in label:
        return marks["init-reaped"] > marks["stored"]
    return True


def make_shell_skill(tmp):
    skill = os.path.join(tmp, "shell")
    os.makedirs(os.path.join(skill, "scripts"))
    with open(os.path.join(skill, "SKILL.md"), "w", encoding="utf-8") as f:
        f.write("---\nname: shell\ndescription: Prints one JSON line; the smallest possible skill.\n---\n")
    with open(os.path.join(skill, "scripts", "main.sh"), "w", encoding="utf-8") as f:
        f.write('#!/bin/bash\necho "{\\"ok\\": true}"\n')
    for root, dirs, files in os.walk(tmp):
        for name in dirs + files:
            os.chmod(os.path.join(root, name), 0o755)
    os.chmod(tmp, 0o755)
    return skill


def run_once(skillctl, skill, out, extra):
    argv = [skillctl, "-v", "run", "--local", "-q", "--output-dir", out, skill] + extra
    start = time.perf_counter_ns()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    wall = (time.perf_counter_ns() - start) / 1e6
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"phases: {' '.join(argv)} failed ({proc.returncode}): {err.strip()[:500]}")
    m = LINE.search(err)
    if not m:
        sys.exit(f"phases: no 'Run phases' line from {skillctl} (built before the marks?)")
    marks = {}
    for item in m.group(1).split():
        name, value = item.split("=")
        marks[name] = float(value)
    return wall, marks


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    binaries = sys.argv[2:] or [os.path.join(SRC, "build", "skillctl", "skillctl")]
    with tempfile.TemporaryDirectory() as tmp:
        # The seccomp cache keeps one entry per program name (skilld/sandbox/seccomp-cache.c):
        # builds sharing a name would replace each other's at every run. Each binary after the
        # first runs under a name of its own; the output names it as given.
        names = {}
        for i, b in enumerate(binaries):
            names[b] = b
            if i > 0:
                names[b] = os.path.join(tmp, f"skillctl-{i}")
                os.symlink(os.path.abspath(b), names[b])
        skills = {
            "shell": (make_shell_skill(tmp), []),
            "python": (os.path.join(SRC, "examples", "skills", "json-transform"), ["--input", INPUT]),
        }
        variants = [(b, s) for b in binaries for s in skills]
        data = {v: [] for v in variants}
        out = os.path.join(tmp, "out")
        for v in variants:                 # warm-up
            run_once(names[v[0]], skills[v[1]][0], out, skills[v[1]][1])
        shuffle = random.Random(15).shuffle   # an order of its own each round (interleave.py)
        for _ in range(rounds):
            order = list(variants)
            shuffle(order)
            for v in order:
                data[v].append(run_once(names[v[0]], skills[v[1]][0], out, skills[v[1]][1]))

    for (binary, skill), runs in data.items():
        print(f"{skill} skill, {binary}: {rounds} runs, medians in ms")
        print(f"  {'span':<52} {'median':>8} {'p90':>8}")
        for label, a, b in SPANS:
            d = [m[b] - m[a] for _, m in runs
                 if a in m and b in m and held_order_fits(label, m) and reap_order_fits(label, m)
                 and verdict_order_fits(label, m)]
            if d:
                print(f"  {label:<52} {statistics.median(d):8.3f} {p90(d):8.3f}")
        during = [m for _, m in runs if "written" in m and "init-reaped" in m]
        if during:
            k = sum(1 for m in during if m["init-reaped"] < m.get("stored-logs", m["init-reaped"]))
            print(f"  {'runs whose init was reaped during the syncs':<52} {k:>4} of {len(during)}")
        walls = [w for w, _ in runs]
        outside = [w - m.get("done", w) for w, m in runs]
        print(f"  {'whole run (harness)':<52} {statistics.median(walls):8.3f} "
              f"{p90(walls):8.3f}")
        print(f"  {'outside sandbox_run(): exec, start-up, loading; exit':<52} "
              f"{statistics.median(outside):8.3f} {p90(outside):8.3f}")
        print()


if __name__ == "__main__":
    main()
