#!/bin/bash
# skillctl's words where a user got something wrong (issue 16): each message names what was wrong
# and what to do, and comes before anything else is tried. Nothing here runs a skill: every case is
# refused first. No service answers (a bus that is not there). Prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/no-socket
export SKILLCTL_SKILLS_PATH='' HOME=$T
unset SKILLCTL_MODE

n=0
failed=0
check() {
        local what=$1; shift
        n=$((n + 1))
        if "$@"; then echo "ok $n - $what"; else
                failed=$((failed + 1))
                echo "not ok $n - $what"
                echo "# rc $(cat "$T/rc"), stderr: $(head -c 1500 "$T/err")"
        fi
}
sc() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
err_is() { [ "$(cat "$T/err")" = "$1" ]; }
err_has() { grep -qF -- "$1" "$T/err"; }
first_err_is() { [ "$(head -n 1 "$T/err")" = "$1" ]; }

# A folder with no SKILL.md, holding a FIFO the tree walk would stop at.
mkdir -p empty-dir && mkfifo empty-dir/vgdb-pipe
sc run empty-dir
check "run FOLDER without SKILL.md says so" \
        err_is "skillctl: empty-dir: a folder without SKILL.md; a skill is a folder with SKILL.md at its top, or a .skill file"
check "... not about a FIFO inside" test "$(grep -c FIFO "$T/err")" = 0
sc run /etc/passwd
check "run /etc/passwd names the file and what was expected" \
        err_has "skillctl: /etc/passwd: not a zip archive; expected a skill folder (holding SKILL.md) or a .skill file"
sc run ./typo
check "run ./typo: the path does not exist, said first" \
        first_err_is "skillctl: ./typo: no such file or directory (expected a skill folder, a .skill file, or the name of a skill: see 'skillctl skill list')"
check "run ./typo: no word of a service" test "$(grep -c service "$T/err")" = 0

mkdir -p noname/scripts
printf -- '---\ndescription: Says hi.\n---\n\n# noname\n' >noname/SKILL.md
printf '#!/bin/sh\necho hi\n' >noname/scripts/main.sh && chmod +x noname/scripts/main.sh
sc run noname
check "run lints first: a SKILL.md without name is refused (125)" test "$(rc)" = 125
check "... with lint's message" err_has "skillctl: noname/SKILL.md:1: error: name: required key is missing"
check "... and what to do" err_has "skillctl: noname: not run: the skill is invalid (1 error; see 'skillctl skill lint noname')"
check "... and it did not run" test ! -e skill-out

mkdir -p ok/scripts
printf -- '---\nname: ok\ndescription: Says hi.\n---\n\n# ok\n' >ok/SKILL.md
printf '#!/bin/sh\necho hi\n' >ok/scripts/main.sh && chmod +x ok/scripts/main.sh
sc run ok --input '{"a": 1,,}'
check "invalid --input gives the parser's position" \
        err_is "skillctl: --input: not valid JSON at line 1, column 10 (near '}')"
printf '{\n  "a": [1,\n    2,, 3]}' >bad.json
sc run ok --input-file bad.json
check "invalid --input-file: the file, line and column" \
        err_is "skillctl: bad.json: not valid JSON at line 3, column 7 (near ', 3]}')"
sc run ok --memory 12Q
check "--memory 12Q lists the units" err_has "--memory 12Q: not a size; give bytes, or a number with one of the units K, M, G, T"
sc run ok --timeout 5y
check "--timeout 5y lists the units" err_has "--timeout 5y: not a duration; give seconds, or a number with one of the units us, ms, s, min, h, d, w"

sc run --bogus ok
check "unknown option: skillctl: prefix and --help pointer" \
        err_is "skillctl: run: unknown option '--bogus' (see 'skillctl run --help')"
sc --bogus
check "unknown global option" err_is "skillctl: unknown option '--bogus' (see 'skillctl --help')"
sc skill lint --frob ok
check "unknown option of a skill subcommand" \
        err_is "skillctl: skill lint: unknown option '--frob' (see 'skillctl skill lint --help')"
sc run ok --memory
check "option without its value" err_is "skillctl: run: option '--memory' needs a value (see 'skillctl run --help')"
sc list --json=yes
check "option given a value it does not take" \
        err_is "skillctl: list: option '--json' takes no value (see 'skillctl list --help')"
sc lsit
check "mistyped verb: did you mean" err_is "skillctl: lsit: unknown command; did you mean 'list'? (see 'skillctl --help')"
check "mistyped verb: exit 2" test "$(rc)" = 2
sc skill lnit ok
check "mistyped skill subcommand: did you mean" \
        err_is "skillctl: lnit: unknown skill subcommand; did you mean 'lint'? (see 'skillctl skill --help')"
sc frobnicate
check "no suggestion for a word close to nothing" \
        err_is "skillctl: frobnicate: unknown command (see 'skillctl --help')"

echo "1..$n"
[ "$failed" -eq 0 ]
