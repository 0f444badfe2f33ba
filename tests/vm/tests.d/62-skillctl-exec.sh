#!/bin/bash
# The invocation forms through the real service, as skills' own instructions run them: exec with
# --cwd /skill and python3 -m, a script by path importing the skill's own package, a
# skill-creator style packager leaving its .skill as an artifact, a frontmatter "timeout: 3s"
# ending the run within seconds, and a polkit rule telling command runs from script runs (the
# "command" detail). Skips (77) only while the daemon is not installed yet.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

skilld=$SKILLD_PREFIX/libexec/skilld
[[ -x $skilld ]] || skip "skilld is not installed at $skilld yet"

work=$PWD
skills=$work/skills
mkdir -p "$skills"
cp -r "$SKILLD_SOURCE_ROOT/tests/sandbox/skills/skill-root" "$SKILLD_SOURCE_ROOT/tests/sandbox/skills/slow-skill" \
    "$skills/"
chmod -R a+rX "$work"

# alice may run anything; bob may run scripts but, by this rule, no commands.
# Before the other tests' rules (60-*), which grant bob every run: the first answer counts.
rule=/etc/polkit-1/rules.d/10-skillctl-exec-test.rules
cat >"$rule" <<'RULES'
polkit.addRule(function(action, subject) {
    if (action.id != "io.skilld.run" && action.id != "io.skilld.run-unlisted")
        return polkit.Result.NOT_HANDLED;
    if (subject.user == "alice")
        return polkit.Result.YES;
    if (subject.user == "bob")
        return action.lookup("command") === undefined ? polkit.Result.YES : polkit.Result.NO;
    return polkit.Result.NOT_HANDLED;
});
RULES
trap 'rm -f "$rule"' EXIT
systemctl restart polkit.service

for u in alice bob; do
    install -d -o "$u" -m 0755 "$work/$u"
done
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$work/out" "$1"; }

# 1. exec --cwd /skill python3 -m scripts.tool, through the service.
as_in alice skillctl exec --system --cwd /skill "$skills/skill-root" -- python3 -m scripts.tool ARG
show_last
assert_eq 0 "$rc" "exec --system python3 -m scripts.tool"
assert_contains "$(cat "$work/out")" "helper says ARG" "the module imported scripts.helper"
! grep -q "running embedded" "$work/err" || fail "skillctl ran embedded with skilld installed"

# 2. The same script by path: the skill root is on the module path.
as_in alice skillctl run --system --script scripts/tool.py "$skills/skill-root" -- ARG
show_last
assert_eq 0 "$rc" "run --script scripts/tool.py"
assert_contains "$(cat "$work/out")" "helper says ARG" "the script by path imported scripts.helper"

# 3. A skill-creator style packager: its .skill comes back as an artifact.
as_in alice skillctl exec --system --output-dir "$work/alice/pk" --cwd /skill "$skills/skill-root" -- \
    python3 -m scripts.package_skill /skill /out/files
show_last
assert_eq 0 "$rc" "exec package_skill"
python3 -c 'import sys, zipfile; sys.exit("skill/scripts/helper.py" not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$work/alice/pk/files/skill.skill" || fail "the packed .skill is not among the artifacts"

# 4. The result of a command run says so, and the service recorded it.
as_in alice skillctl exec --system --json "$skills/skill-root" -- sh -c 'pwd'
assert_eq 0 "$rc" "exec --json"
assert_eq "True /work" "$(json '["command"]') $(json '["cwd"]')" "the result names the form"

# 5. timeout: 3s in the frontmatter ends the run as timeout within seconds.
start=$SECONDS
as_in alice skillctl run --system --json "$skills/slow-skill"
took=$((SECONDS - start))
assert_eq 124 "$rc" "a skill declaring timeout: 3s ends as timeout"
[[ $took -lt 20 ]] || fail "the declared timeout took $took s"
assert_eq 3000000 "$(json '["limits"]["timeout_usec"]')" "the result records the declared timeout"
assert_contains "$(json '["limits"]["from_skill"]')" "timeout" "the result says the skill set it"

# 6. polkit tells the forms apart: bob may run the script, not a command.
as_in bob skillctl run --system --script scripts/tool.py "$skills/skill-root" -- B
show_last
assert_eq 0 "$rc" "bob's script run is allowed"
as_in bob skillctl exec --system "$skills/skill-root" -- python3 -m scripts.tool B
show_last
[[ $rc != 0 ]] || fail "bob's command run was allowed despite the rule"
assert_contains "$(cat "$work/err")" "not authorized" "bob's command run is refused by polkit"

# 7. A folder input through the service: the tree lands in /work/data; a symlink in it to
#    /etc/shadow is refused and its content never shows.
mkdir -p "$work/alice/data/sub"
echo A >"$work/alice/data/a.txt"
echo B >"$work/alice/data/sub/b.txt"
chown -R alice "$work/alice/data"
as_in alice skillctl exec --system --file data="$work/alice/data" "$skills/skill-root" -- \
    sh -c 'cat /work/data/a.txt /work/data/sub/b.txt'
show_last
assert_eq 0 "$rc" "exec with a folder input"
assert_eq "$(printf 'A\nB')" "$(cat "$work/out")" "data/a.txt and data/sub/b.txt"
ln -s /etc/shadow "$work/alice/data/sub/link"
as_in alice skillctl exec --system --file data="$work/alice/data" "$skills/skill-root" -- cat /work/data/sub/link
show_last
[[ $rc != 0 ]] || fail "a folder with a symlink was accepted"
! grep -q 'root:' "$work/out" || fail "the content of /etc/shadow showed"
