#!/usr/bin/python3
"""Generates policy/seccomp-inventory.tsv: the system calls the compatibility corpus makes.

Runs every example skill (with the input test-compat.sh gives it) and every workload of the
corpus under strace -f, outside the sandbox (the filter refuses ptrace inside it) but in a network
namespace of their own holding only lo, as a run without network has. Writes one line per system
call, and for the calls whose arguments the filter looks at (socket families, namespace flags,
ioctl requests, personas), one line per distinct deciding argument. test-inventory.c then checks
every line against the filter.

Usage (root, strace installed): tests/compat/gen-inventory.py [OUTPUT]
Default OUTPUT: policy/seccomp-inventory.tsv of this source tree.
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

SRC = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(SRC, "tests", "compat", "skill")
EXAMPLES = os.path.join(SRC, "examples", "skills")
INTERPRETERS = {".py": "/usr/bin/python3", ".js": "node", ".sh": "/bin/bash"}
EXAMPLE_INPUT = {
    "json-transform": '{"numbers": [1, 2], "text": "a b"}',
    "make-artifacts": '{"rows": [{"item": "a", "qty": 1}], "title": "T"}',
    "node-greet": '{"names": ["Ada"]}',
}

# Which arguments decide for the calls the filter has argument rules on (skilld/sandbox/seccomp.c):
# index -> mask. The other arguments, and every argument of the other calls, are "-".
DECIDING = {
    "socket": {0: 0xFFFFFFFFFFFFFFFF, 1: 0xF, 2: 0xFFFFFFFFFFFFFFFF},
    "socketpair": {0: 0xFFFFFFFFFFFFFFFF, 1: 0xF, 2: 0xFFFFFFFFFFFFFFFF},
    "clone": {0: 0xFFFFFFFFFFFFFF00},   # the flags; the low byte is the exit signal
    "unshare": {0: 0xFFFFFFFFFFFFFFFF},
    "ioctl": {1: 0xFFFFFFFF},
    "personality": {0: 0xFFFFFFFFFFFFFFFF},
    # The calls that reach a process by pid, where the filter protects the run's init.
    "prlimit64": {0: 0xFFFFFFFFFFFFFFFF},
    "sched_setattr": {0: 0xFFFFFFFFFFFFFFFF},
    "sched_setscheduler": {0: 0xFFFFFFFFFFFFFFFF},
    "sched_setparam": {0: 0xFFFFFFFFFFFFFFFF},
    "sched_setaffinity": {0: 0xFFFFFFFFFFFFFFFF},
    "setpriority": {0: 0xFFFFFFFFFFFFFFFF, 1: 0xFFFFFFFFFFFFFFFF},
    "ioprio_set": {0: 0xFFFFFFFFFFFFFFFF, 1: 0xFFFFFFFFFFFFFFFF},
}

LINE = re.compile(r"^(?:\[pid +\d+\] )?([a-z_0-9]+)\((.*)\) +=")


def workloads():
    """(name, argv, stdin, env) of everything the corpus runs."""
    for d in sorted(glob.glob(os.path.join(EXAMPLES, "*", ""))):
        name = os.path.basename(os.path.dirname(d))
        (script,) = glob.glob(os.path.join(d, "scripts", "main.*"))
        text = EXAMPLE_INPUT.get(name, "{}")
        yield ("example " + name, [INTERPRETERS[os.path.splitext(script)[1]], script], text,
               {"SANDBOX_INPUT": text})
    names = subprocess.run(["bash", os.path.join(CORPUS, "scripts", "run.sh")], check=True,
                           capture_output=True, text=True).stdout.split()
    for w in names:
        yield ("corpus " + w, ["bash", os.path.join(CORPUS, "scripts", "run.sh"), w], "", {})


def trace(argv, stdin, env, tmp):
    """{(syscall, args): count} of one run, where args is the tuple of deciding values."""
    out = os.path.join(tmp, "trace")
    for f in glob.glob(out + "*"):
        os.unlink(f)
    outdir = os.path.join(tmp, "out")
    os.makedirs(os.path.join(outdir, "files"), exist_ok=True)
    full_env = dict(os.environ, SANDBOX_OUTPUT=os.path.join(outdir, "output.json"),
                    SANDBOX_FILES_DIR=os.path.join(outdir, "files") + "/", **env)
    # lo comes up as the sandbox's init brings it up.
    r = subprocess.run(["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
                        "strace", "-f", "-ff", "-qq", "-X", "raw", "-e", "raw=all", "-s", "0", "-o", out,
                        "--"] + argv,
                       input=stdin, text=True, capture_output=True, env=full_env, cwd=tmp)
    seen = collections.Counter()
    for f in glob.glob(out + ".*"):
        with open(f, errors="replace") as fh:
            for line in fh:
                m = LINE.match(line)
                if not m:
                    continue
                name, raw = m.group(1), m.group(2)
                key = ()
                if name in DECIDING:
                    args = [a.strip() for a in raw.split(",")]
                    vals = []
                    for i in range(6):
                        if i in DECIDING[name] and i < len(args):
                            try:
                                vals.append("0x%x" % (int(args[i], 0) & DECIDING[name][i]))
                            except ValueError:
                                vals.append("-")
                        else:
                            vals.append("-")
                    key = tuple(vals)
                seen[(name, key)] += 1
    return r.returncode, seen


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "policy", "seccomp-inventory.tsv")
    users = collections.defaultdict(set)
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv, stdin, env in workloads():
            rc, seen = trace(argv, stdin, env, tmp)
            if rc != 0 and not name.endswith("always-fails"):
                sys.exit(f"{name} failed (exit {rc}) under strace; fix it first")
            for key in seen:
                users[key].add(name)
            print(f"traced {name}: {len(seen)} distinct calls", file=sys.stderr)
    lines = []
    for (name, key), who in sorted(users.items()):
        args = key or ("-",) * 6
        lines.append("\t".join([name, *args[:3], str(len(who)), ",".join(sorted(who))]))
    tmp_target = target + ".tmp"
    with open(tmp_target, "w") as f:
        f.write("# The system calls of the compatibility corpus (tests/compat/), generated by\n"
                "# tests/compat/gen-inventory.py; tests/compat/test-inventory.c checks that the filter\n"
                "# refuses none of them. Columns: syscall, the first three arguments where the filter\n"
                "# decides on them (masked as it does; - where it does not look), how many of the\n"
                "# workloads make the call, and which.\n")
        f.write("#deciding: " + " ".join(sorted(DECIDING)) + "\n")
        f.write("#syscall\targ0\targ1\targ2\tworkloads\tused_by\n")
        f.write("\n".join(lines) + "\n")
    os.replace(tmp_target, target)
    print(f"wrote {len(lines)} lines to {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
