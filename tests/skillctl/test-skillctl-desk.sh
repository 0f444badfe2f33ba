#!/bin/bash
# skillctl at the desk, through the built binary: `skill init` scaffolds skills that lint clean
# with --strict and run; skills are found by name in the user's skill folders (project, XDG, home,
# or $SKILLCTL_SKILLS_PATH) by `run` and `skill list`; SKILLCTL_MODE=local makes embedded the
# default; and the words of the rough edges issue 16 lists (a missing path said first, no notice
# where none helps). Runs skills embedded, so needs root (namespaces); prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP skillctl run needs root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
# A home and XDG folder of our own, and no service: a system bus that is not there.
export HOME=$T/home XDG_DATA_HOME=$T/xdg
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/no-socket
unset SKILLCTL_SKILLS_PATH SKILLCTL_MODE
mkdir -p "$HOME" "$XDG_DATA_HOME" "$T/project"

. "$(dirname "$0")/../lib/tap.sh"
sc() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
has() { grep -q -- "$1" "$T/${2:-out}"; }
not_has() { ! grep -q -- "$1" "$T/${2:-out}"; }
first_line() { head -n 1 "$T/${2:-err}" | grep -q -- "$1"; }

# --- skill init, for each language: lints clean with --strict and runs. ----------------------
cd "$T/project" || exit 1
for lang in py js sh; do
        sc skill init --lang "$lang" "demo-$lang"
        check "init --lang $lang exits 0" test "$(rc)" = 0
        check "init --lang $lang wrote SKILL.md and scripts/main.$lang" \
                test -f "demo-$lang/SKILL.md" -a -x "demo-$lang/scripts/main.$lang"
        check "init --lang $lang leaves no temporary folder" test -z "$(find . -maxdepth 1 -name '.demo-*')"
        sc skill lint --strict "demo-$lang"
        check "demo-$lang lints clean with --strict" test "$(rc)" = 0
        sc run "demo-$lang" --input '{"name": "Ada"}' --json
        check "demo-$lang runs (exit 0)" test "$(rc)" = 0
        check "demo-$lang prints its greeting as output JSON" has '"greeting"'
done
sc skill init demo-py
check "init over an existing folder is refused" test "$(rc)" = 2
check "init over an existing folder says so" has "demo-py: already exists" err
sc skill init Bad_Name
check "init of an invalid name is refused" test "$(rc)" = 2
check "init of an invalid name says what a name is" has "not a skill name" err
sc skill init --lang rb x
check "init --lang rb lists the languages" has "expected py, js or sh" err
# The issue's own sequence, default language, from a fresh folder.
mkdir -p "$T/fresh" && cd "$T/fresh" || exit 1
sc skill init demo-skill
check "skill init demo-skill" test "$(rc)" = 0
sc skill lint --strict demo-skill
check "skill lint --strict demo-skill" test "$(rc)" = 0
sc run demo-skill
check "run demo-skill (a folder of the current directory)" test "$(rc)" = 0
check "no notice about a service that is not installed" not_has "embedded" err
cd "$T/project" || exit 1

# --- Finding skills by name. ------------------------------------------------------------------
mkdir -p .claude/skills "$XDG_DATA_HOME/skills" "$HOME/.agents/skills"
mv demo-sh .claude/skills/
mv demo-js "$HOME/.agents/skills/"
(cd "$XDG_DATA_HOME/skills" && "$SKILLCTL" skill init --lang sh demo-js >/dev/null)
sed -i 's/Hello from/Hi from XDG/' "$XDG_DATA_HOME/skills/demo-js/scripts/main.sh"
mkdir -p "$T/elsewhere" && cd "$T/elsewhere" || exit 1
sc run demo-js --input '{}'
check "run NAME finds ~/.agents/skills/NAME ... after \$XDG_DATA_HOME/skills" has "Hi from XDG"
rm -rf "$XDG_DATA_HOME/skills/demo-js"
sc run demo-js --input '{"name": "Bo"}'
check "run NAME finds ~/.agents/skills/NAME" has "Hello, Bo!"
sc run demo-sh
check "./.claude/skills is the current directory's only" test "$(rc)" = 125
check "a name found nowhere says where it looked" has "no skill of that name in your skill folders" err
cd "$T/project" || exit 1
sc run demo-sh
check "run NAME finds ./.claude/skills/NAME" test "$(rc)" = 0
sc skill list --quiet
check "skill list --quiet lists the user's skills" test "$(sort "$T/out" | tr '\n' ' ')" = "demo-js demo-sh "
sc skill list
check "skill list without a service lists them with their folder" has "demo-sh *user *- */.*/\.claude/skills/demo-sh"
SKILLCTL_SKILLS_PATH=$T/project sc skill list --quiet
check "SKILLCTL_SKILLS_PATH replaces the folders" test "$(sort "$T/out" | tr '\n' ' ')" = "demo-py "
SKILLCTL_SKILLS_PATH=$T/project sc run demo-py
check "run NAME through SKILLCTL_SKILLS_PATH" test "$(rc)" = 0
SKILLCTL_SKILLS_PATH='' sc run demo-sh
check "an empty SKILLCTL_SKILLS_PATH turns the search off" test "$(rc)" = 125

# --- Words. -----------------------------------------------------------------------------------
sc run ./typo
check "run ./typo exits 125" test "$(rc)" = 125
check "run ./typo says the path does not exist, first" \
        first_line "^skillctl: ./typo: no such file or directory (expected a skill folder"
sc run typo/nested
check "run typo/nested: the same" first_line "typo/nested: no such file or directory"
SKILLCTL_MODE=local sc run demo-sh
check "SKILLCTL_MODE=local runs embedded" test "$(rc)" = 0
SKILLCTL_MODE=remote sc run demo-sh
check "a bad SKILLCTL_MODE is refused" has 'SKILLCTL_MODE=remote: expected local, system or auto' err
SKILLCTL_MODE=system sc run demo-sh
check "SKILLCTL_MODE=system forbids embedded runs" has "forbids running embedded" err
SKILLCTL_MODE=system sc run --local demo-sh
check "--local wins over SKILLCTL_MODE=system" test "$(rc)" = 0

tap_finish
