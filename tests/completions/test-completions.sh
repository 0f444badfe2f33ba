#!/bin/bash
# The shell completions of completions/, each loaded by its shell and asked as a user's <TAB>
# asks: bash (the function called with COMP_WORDS), fish (complete -C), zsh (loaded by compinit
# without an error, and its verbs). Skill names come from the built skillctl, which finds them in
# $SKILLCTL_SKILLS_PATH; no service answers here (run ids against a service: the client test).
# The verbs each completion offers are those of 'skillctl --help', so a new verb fails this test
# until the completions know it. zsh and fish are skipped (as TAP skips) when not installed.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
C=$SRC/completions

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin" "$T/skills/alpha-skill" "$T/skills/beta-skill" "$T/work/folder"
ln -s "$SKILLCTL" "$T/bin/skillctl"
export PATH="$T/bin:$PATH"
for s in alpha-skill beta-skill; do
        printf -- '---\nname: %s\ndescription: x\n---\n' "$s" >"$T/skills/$s/SKILL.md"
done
touch "$T/work/pack.skill" "$T/work/notes.txt"
export SKILLCTL_SKILLS_PATH=$T/skills
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/no-socket
cd "$T/work" || exit 1

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() {
        local what=$1 want=$2 got=$3
        if [[ " $got " == *" $want "* ]]; then ok "$what"; else
                n=$((n + 1)); failed=$((failed + 1))
                echo "not ok $n - $what"
                echo "# expected '$want' among: $got"
        fi
}
check_not() {
        local what=$1 unwanted=$2 got=$3
        if [[ " $got " != *" $unwanted "* ]]; then ok "$what"; else
                n=$((n + 1)); failed=$((failed + 1))
                echo "not ok $n - $what"
                echo "# did not expect '$unwanted' among: $got"
        fi
}

# The verbs of skillctl --help: indented lowercase words in its command lists.
mapfile -t help_verbs < <("$SKILLCTL" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort -u)
[[ ${#help_verbs[@]} -ge 5 ]] || { echo "Bail out! no verbs read from skillctl --help"; exit 1; }

# --- bash -----------------------------------------------------------------------------------------
bash_complete() {
        # $1: the command line up to the cursor; the last word is the one being completed.
        bash -c '
                source "$1"
                read -r -a COMP_WORDS <<<"$2"
                [[ $2 == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE=$2 COMP_POINT=${#2}
                _skillctl skillctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\n" "${COMPREPLY[@]}"' bash "$C/skillctl.bash" "$1" | sort -u | tr '\n' ' '
}
got=$(bash_complete "skillctl ")
for v in "${help_verbs[@]}"; do check "bash: verb $v" "$v" "$got"; done
check "bash: skill init" init "$(bash_complete "skillctl skill ")"
check "bash: global option --host" --host "$(bash_complete "skillctl --h")"
check "bash: run options" --memory "$(bash_complete "skillctl run --me")"
check "bash: run NAME from the skill folders" alpha-skill "$(bash_complete "skillctl run ")"
check "bash: run a .skill file" pack.skill "$(bash_complete "skillctl run ")"
check "bash: run a folder" folder "$(bash_complete "skillctl run ")"
check_not "bash: not any file" notes.txt "$(bash_complete "skillctl run ")"
check "bash: after -H HOST, still the verbs" status "$(bash_complete "skillctl -H localhost sta")"
check "bash: --lang" js "$(bash_complete "skillctl skill init --lang ")"
check "bash: logs --stream" stderr "$(bash_complete "skillctl logs --stream ")"
check "bash: list --quiet" --quiet "$(bash_complete "skillctl list --q")"
check "bash: list --lines" --lines "$(bash_complete "skillctl list --l")"
check "bash: list --lines all" all "$(bash_complete "skillctl list --lines ")"
check "bash: runs prune" prune "$(bash_complete "skillctl runs ")"
check "bash: runs prune --older-than" --older-than "$(bash_complete "skillctl runs prune --o")"
check_not "bash: nothing after the skill (the script's arguments)" alpha-skill \
        "$(bash_complete "skillctl run beta-skill ")"

# --- fish -----------------------------------------------------------------------------------------
if command -v fish >/dev/null; then
        fish_complete() {
                fish --no-config -c "source '$C/skillctl.fish'; complete -C'$1'" | cut -f1 | sort -u | tr '\n' ' '
        }
        got=$(fish_complete "skillctl ")
        for v in "${help_verbs[@]}"; do check "fish: verb $v" "$v" "$got"; done
        check "fish: skill init" init "$(fish_complete "skillctl skill ")"
        check "fish: run options" --memory "$(fish_complete "skillctl run --me")"
        check "fish: run NAME from the skill folders" beta-skill "$(fish_complete "skillctl run ")"
        check "fish: --lang" py "$(fish_complete "skillctl skill init --lang ")"
        check "fish: skill remove NAME" alpha-skill "$(fish_complete "skillctl skill remove ")"
        check "fish: runs prune" prune "$(fish_complete "skillctl runs ")"
        check "fish: list --lines" --lines "$(fish_complete "skillctl list --l")"
else
        skip "fish completion" "fish is not installed"
fi

# --- zsh ------------------------------------------------------------------------------------------
if command -v zsh >/dev/null; then
        if out=$(zsh -n "$C/_skillctl" 2>&1); then ok "zsh: _skillctl parses"; else
                n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - zsh: _skillctl parses"; echo "# $out"
        fi
        # compinit finds it on the fpath and binds it to skillctl, without a word on stderr.
        out=$(ZDOTDIR=$T zsh -f -c "fpath=('$C' \$fpath); autoload -Uz compinit; compinit -u -d '$T/zcompdump';
                print -r -- \${_comps[skillctl]}" 2>&1)
        check "zsh: compinit binds _skillctl to skillctl" _skillctl "$out"
        zsh_verbs=$(sed -n "/^_skillctl() {/,/^    )/s/^        '\([a-z-]*\):.*/\1/p" "$C/_skillctl" | tr '\n' ' ')
        for v in "${help_verbs[@]}"; do check "zsh: verb $v" "$v" "$zsh_verbs"; done
else
        skip "zsh completion" "zsh is not installed"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
