#!/bin/bash
# One identity through the service: a .skill archive carrying a planted, unchecked-hash
# __pycache__/helper.cpython-311.pyc (as another tool's packager would include it) is run by
# alice through skilld. The run executes the hashed source, not the bytecode, and the skill_hash
# the service records (what polkit rules are told) is the hash skillctl computes for the folder.
# Skips (77) only while the daemon is not installed yet.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

skilld=$SKILLD_PREFIX/libexec/skilld
[[ -x $skilld ]] || skip "skilld is not installed at $skilld yet"

# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"
daemon_setup      # alice may run skills passed by fd

work=$PWD
install -d -o alice -m 0755 "$work/alice"
s=$work/alice/planted
mkdir -p "$s/scripts" "$work/evil"
printf -- '---\nname: planted\ndescription: Imports a sibling module.\n---\nRun main.py.\n' >"$s/SKILL.md"
printf 'import helper\nprint("helper says", helper.who())\n' >"$s/scripts/main.py"
printf 'def who():\n    return "source"\n' >"$s/scripts/helper.py"
printf 'def who():\n    return "PLANTED"\n' >"$work/evil/helper.py"
hash=$(skillctl skill show --json "$s" | python3 -c 'import json,sys; print(json.load(sys.stdin)["content_hash"])')
python3 - "$work/evil/helper.py" "$s" "$work/alice/planted.skill" <<'PY'
import os, py_compile, sys, zipfile
evil, skill, out = sys.argv[1:]
py_compile.compile(evil, cfile=os.path.join(skill, "scripts/__pycache__/helper.cpython-311.pyc"),
                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)
with zipfile.ZipFile(out, "w") as z:
    for root, dirs, files in os.walk(skill):
        for f in files:
            p = os.path.join(root, f)
            z.write(p, os.path.join("planted", os.path.relpath(p, skill)))
PY
chmod -R a+rX "$work/alice"
python3 -m zipfile -l "$work/alice/planted.skill" | grep -q 'helper.cpython-311.pyc' ||
    fail "the archive does not carry the planted .pyc"

rc=0
(cd "$work/alice" && as_user alice skillctl run --system --json planted.skill) >"$work/out" 2>"$work/err" || rc=$?
assert_eq 0 "$rc" "skillctl run --system of the archive (stderr: $(head -c 500 "$work/err"))"
! grep -q "running embedded" "$work/err" || fail "skillctl ran embedded with skilld installed"
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$work/out" "$1"; }
assert_eq succeeded "$(json '["status"]')" "the run's status"
assert_contains "$(json '["stdout"]["text"]')" "helper says source" "the run executed the hashed source"
! grep -q PLANTED "$work/out" || fail "the planted bytecode ran through the service"
assert_eq "$hash" "$(json '["skill_hash"]')" "the service's skill_hash is the folder's content hash"
echo "the planted .pyc stayed hidden; skill_hash $hash names what ran"
