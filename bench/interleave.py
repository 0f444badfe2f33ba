#!/usr/bin/python3
"""Interleaved timing of commands: the engine of bench/run-bench.sh.

The machines are shared and noisy, so variants are never timed in blocks one after the other
(a burst of load would land on one of them only): every round runs each variant once, in an
order shuffled from round to round, and a variant's figure is the median over the rounds. The
ratios between variants of one round share whatever the machine was doing then, which is why
only ratios are quoted.

Usage: interleave.py ROUNDS WARMUP SPEC.json
SPEC.json: {"variants": [{"name": ..., "argv": [...], "stdin": PATH or null, "cwd": DIR (optional),
"fds": {"9": PATH, ...} (optional: files opened for each run and passed at those numbers)}],
"ratios":
[{"label": ..., "num": NAME, "den": NAME, "goal": FLOAT or null}]}
Prints a table of medians and the ratios; exits non-zero only when a variant fails to run.
"""

import json
import os
import random
import statistics
import subprocess
import sys
import time


def open_fds(variant):
    """The variant's extra files, each opened anew (a reader consumes it) at its number."""
    fds = []
    for number, path in variant.get("fds", {}).items():
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        if fd != int(number):
            os.dup2(fd, int(number))
            os.close(fd)
        fds.append(int(number))
    return fds


def run_once(variant):
    stdin = open(variant["stdin"], "rb") if variant.get("stdin") else subprocess.DEVNULL
    fds = open_fds(variant)
    try:
        start = time.perf_counter_ns()
        proc = subprocess.run(variant["argv"], stdin=stdin, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd=variant.get("cwd"), check=False,
                              pass_fds=fds)
        elapsed = time.perf_counter_ns() - start
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()
        for fd in fds:
            os.close(fd)
    if proc.returncode != 0:
        sys.exit(f"bench: {variant['name']} failed with exit status {proc.returncode}: "
                 f"{proc.stderr.decode(errors='replace').strip()[:500]}")
    return elapsed / 1e6


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    rounds, warmup = int(sys.argv[1]), int(sys.argv[2])
    with open(sys.argv[3], encoding="utf-8") as f:
        spec = json.load(f)
    variants = spec["variants"]

    for _ in range(warmup):
        for v in variants:
            run_once(v)

    times = {v["name"]: [] for v in variants}
    # A fixed rotation keeps neighbours: in run-bench.sh the start-up variants came right after
    # a Python run every round but one in ten (whose namespaces the kernel still tears down),
    # and the same binary timed as its own baseline started 1.09 to 1.12 times slower as
    # "skillctl" than as "baseline". Each round runs the variants in an order of its own.
    shuffle = random.Random(15).shuffle
    for _ in range(rounds):
        order = list(variants)
        shuffle(order)
        for v in order:
            times[v["name"]].append(run_once(v))

    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"{'variant':<22} {'median ms':>10} {'p10 ms':>8} {'p90 ms':>8}")
    for v in variants:
        t = sorted(times[v["name"]])
        p10 = t[max(0, len(t) // 10)]
        p90 = t[min(len(t) - 1, (len(t) * 9) // 10)]
        print(f"{v['name']:<22} {med[v['name']]:>10.2f} {p10:>8.2f} {p90:>8.2f}")
    print()
    print(f"{'ratio':<40} {'value':>7} {'goal':>7}")
    for r in spec.get("ratios", []):
        if r["num"] not in med or r["den"] not in med:
            continue
        value = med[r["num"]] / med[r["den"]]
        goal = r.get("goal")
        verdict = "" if goal is None else ("  met" if value <= goal else "  not met")
        goal_s = "" if goal is None else f"{goal:.2f}"
        print(f"{r['label']:<40} {value:>7.2f} {goal_s:>7}{verdict}")


if __name__ == "__main__":
    main()
