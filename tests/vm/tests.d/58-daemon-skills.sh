#!/bin/bash
# Installed skills: InstallSkill validates and installs (io.skilld.manage-skills: root and carol
# yes, alice no), ListSkills shows them to everyone, RunInstalled runs them by name, RemoveSkill
# takes them away; an invalid skill is refused with InvalidSkill.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'

echoer=$(make_skill echoer 'echo "v1 $1"')
out=$("$SKILLD_CALL" install "$echoer")
hash=${out#echoer }
[[ $hash =~ ^[0-9a-f]{64}$ ]] || fail "InstallSkill answered '$out'"
list=$(as_user alice busctl --system call "${MANAGER[@]}" ListSkills)
assert_contains "$list" "\"echoer\" \"A test skill of the VM suite.\" \"$hash\" \"installed\"" "ListSkills"
echo "root installed echoer ($hash)"

err=$(call alice install "$echoer" --replace 2>&1) && fail "alice installed a skill"
assert_contains "$err" "io.skilld.manage-skills" "InstallSkill by alice"
err=$(call carol install "$echoer" 2>&1) && fail "a second install without replace succeeded"
assert_contains "$err" "io.skilld.Skilld1.Error.SkillExists" "InstallSkill of an installed name"

echoer=$(make_skill echoer 'echo "v2 $1"')
call carol install "$echoer" --replace >/dev/null
mapfile -t lines < <(call bob run-installed --stdout --wait echoer bob)
assert_eq "v2 bob" "${lines[1]:-}" "bob's run of the replaced skill"
echo "carol replaced echoer; bob ran it: ${lines[1]:-}"

mkdir -p bad/scripts
printf -- '---\nname: Not_A_Name\ndescription: x\n---\n' >bad/SKILL.md
echo 'echo bad' >bad/scripts/main.sh
python3 -c 'import sys, zipfile
with zipfile.ZipFile("bad.skill", "w") as z:
    for f in ("SKILL.md", "scripts/main.sh"):
        z.write("bad/" + f, f)'
chmod 0644 bad.skill
err=$("$SKILLD_CALL" install bad.skill 2>&1) && fail "an invalid skill was installed"
assert_contains "$err" "io.skilld.Skilld1.Error.InvalidSkill" "InstallSkill of an invalid skill"
echo "invalid skill refused: $err"

err=$(as_user alice busctl --system call "${MANAGER[@]}" RemoveSkill s echoer 2>&1) &&
    fail "alice removed a skill"
assert_contains "$err" "io.skilld.manage-skills" "RemoveSkill by alice"
as_user carol busctl --system call "${MANAGER[@]}" RemoveSkill s echoer
list=$(as_user alice busctl --system call "${MANAGER[@]}" ListSkills)
[[ $list != *echoer* ]] || fail "echoer is still listed: $list"
err=$(call bob run-installed echoer 2>&1) && fail "a removed skill ran"
assert_contains "$err" "io.skilld.Skilld1.Error.NoSuchSkill" "RunInstalled of a removed skill"
echo "carol removed echoer"
