#!/usr/bin/python3
"""Where an embedded run's fixed cost goes, phase by phase (issue 15).

Runs `skillctl -v run --local` of the trivial shell skill (the one bench/run-bench.sh times)
and of the Python example json-transform, ROUNDS times each, interleaved (and, given several
skillctl binaries, each of them in every round, in a rotated order), and reads the engine's
"Run phases (ms):" debug line: CLOCK_MONOTONIC marks taken in the engine, the sandbox init and
the skill process (RunMark in skilld/sandbox/sandbox-internal.h). Prints the median length of
each phase (from the mark before it), the median whole run as the harness saw it, and what
lies outside the engine (process start-up until sandbox_run(), and after it until exit).

Usage: bench/phases.py [ROUNDS] [SKILLCTL...]      (defaults: 50, build/skillctl/skillctl)
Medians of phases do not add up to the median of the whole; the marks of a phase a run skipped
are left out. A benchmark, not a test: nothing is asserted.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT = '{"numbers": [1, 2, 3, 4], "text": "the quick brown fox"}'
LINE = re.compile(r"Run phases \(ms\):(.*)$", re.M)


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
        skills = {
            "shell": (make_shell_skill(tmp), []),
            "python": (os.path.join(SRC, "examples", "skills", "json-transform"), ["--input", INPUT]),
        }
        variants = [(b, s) for b in binaries for s in skills]
        data = {v: [] for v in variants}
        out = os.path.join(tmp, "out")
        for v in variants:                 # warm-up
            run_once(v[0], skills[v[1]][0], out, skills[v[1]][1])
        for i in range(rounds):
            k = i % len(variants)
            for v in variants[k:] + variants[:k]:
                data[v].append(run_once(v[0], skills[v[1]][0], out, skills[v[1]][1]))

    for (binary, skill), runs in data.items():
        print(f"{skill} skill, {binary}: {rounds} runs, medians in ms")
        order = []
        for _, marks in runs:
            for name in marks:
                if name not in order:
                    order.append(name)
        print(f"  {'phase (until the mark)':<24} {'length':>8} {'at':>8}")
        prev = None
        for name in order:
            at = [m[name] for _, m in runs if name in m]
            if prev is None:
                length = "-"
            else:
                d = [m[name] - m[prev] for _, m in runs if name in m and prev in m]
                length = f"{statistics.median(d):8.3f}"
            print(f"  {name:<24} {length:>8} {statistics.median(at):8.3f}")
            prev = name
        walls = [w for w, _ in runs]
        outside = [w - m.get("done", w) for w, m in runs]
        print(f"  {'whole run (harness)':<24} {statistics.median(walls):8.3f}"
              f"  (p10 {statistics.quantiles(walls, n=10)[0]:.3f}, p90 {statistics.quantiles(walls, n=10)[-1]:.3f})")
        print(f"  {'outside sandbox_run()':<24} {statistics.median(outside):8.3f}"
              "  (exec, start-up, loading the skill; exit)")
        print()


if __name__ == "__main__":
    main()
