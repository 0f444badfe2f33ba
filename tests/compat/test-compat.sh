#!/bin/bash
# The compatibility proof of the syscall filter: every skill under examples/skills/ and every
# workload of the corpus (skill/workloads/: real Python, Node.js and Bash programs using what a
# skill uses) runs in the sandbox through skillctl, and the filter refuses none of their system
# calls (result.json's refused_syscalls is []). A change to the filter that breaks one of them
# fails here with the call named. Needs root (namespaces); prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
EXAMPLES=$SRC/examples/skills
CORPUS=$SRC/tests/compat/compat-corpus

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP running skills needs root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

. "$(dirname "$0")/../lib/tap.sh"

# "STATUS REFUSED" of a result.json: refused is the list as text ([] when none).
verdict() {
        /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["refused_syscalls"]
print(d["status"], "[]" if r == [] else json.dumps(r))' "$1" 2>/dev/null || echo "no-result -"
}

# run NAME EXPECTED-STATUS SKILL [skillctl args...]
run() {
        local name=$1 want=$2 skill=$3 out=$T/$n v
        shift 3
        rm -rf "$out"
        # --local: the engine here (the service path uses the same engine, and its result is the
        # same JSON). A generous timeout: multiprocessing's spawn starts several interpreters.
        "$SKILLCTL" run --local -q --output-dir "$out" --timeout 120 --tasks 256 "$skill" "$@" \
                >"$T/stdout" 2>"$T/stderr"
        v=$(verdict "$out/result.json")
        if [ "$v" = "$want []" ]; then
                ok "$name: $want, nothing refused"
        else
                not_ok "$name: expected \"$want []\", got \"$v\"" \
                        "stderr: $(tail -c 1500 "$out/stderr.log" 2>/dev/null || tail -c 1500 "$T/stderr")"
        fi
}

# The examples, with the input each documents; a new example runs with "{}" and must at least
# not be refused anything.
for dir in "$EXAMPLES"/*/; do
        skill=$(basename "$dir")
        case $skill in
        always-fails) run "example $skill" failed "$dir" ;;
        json-transform) run "example $skill" succeeded "$dir" --input '{"numbers": [1, 2], "text": "a b"}' ;;
        make-artifacts) run "example $skill" succeeded "$dir" --input '{"rows": [{"item": "a", "qty": 1}], "title": "T"}' ;;
        node-greet) run "example $skill" succeeded "$dir" --input '{"names": ["Ada"]}' ;;
        shell-report) run "example $skill" succeeded "$dir" ;;
        *) run "example $skill" succeeded "$dir" --input '{}' ;;
        esac
done

# In the VM (emulated CPUs: Node.js takes seconds to start) the whole corpus would take five
# minutes; there the examples and a few workloads show the same filter on the VM's kernel under
# cgroup v2, and the whole corpus runs on the host.
vm_sample=" python/subprocess_.py python/sockets.py node/fs.js bash/pipelines.sh "
for w in $(bash "$CORPUS/scripts/run.sh"); do
        if [ "${SKILLD_VM:-}" = 1 ] && [[ $vm_sample != *" $w "* ]]; then
                continue
        fi
        run "corpus $w" succeeded "$CORPUS" -- "$w"
done

tap_finish
