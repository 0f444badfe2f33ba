#!/bin/bash
# skillctl skill lint/show/package, end to end through the built binary: exit statuses, the
# diagnostics' file/key/line, JSON output, and that a packaged skill hashes like its folder.
# Prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
EXAMPLES=$SRC/examples/skills
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

. "$(dirname "$0")/../lib/tap.sh"

# Runs skillctl, keeping stdout, stderr and the exit status.
run() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$T/out" "$1"; }

for s in "$EXAMPLES"/*/; do
        name=$(basename "$s")
        run skill lint "$s"
        check "lint $name is valid" test "$(rc)" = 0
done

run --version
check "--version" grep -q '^skillctl [0-9]' "$T/out"
run skill lint --help
check "skill lint --help exits 0" test "$(rc)" = 0

# A skill whose name does not match its folder, with a bad description: errors with lines.
mkdir -p "$T/bad-skill/scripts"
cat >"$T/bad-skill/SKILL.md" <<'MD'
---
name: Other--Name
description: ""
version: 2
---
Body.
MD
run skill lint "$T/bad-skill"
check "invalid skill exits 1" test "$(rc)" = 1
check "name error names file, line and key" grep -q 'bad-skill/SKILL.md:2: error: name: ' "$T/out"
check "description error names line 3" grep -q 'SKILL.md:3: error: description: ' "$T/out"
check "unknown key is a warning on line 4" grep -q 'SKILL.md:4: warning: version: ' "$T/out"

run skill lint --json "$T/bad-skill"
check "--json: valid is false" test "$(json_get '["valid"]')" = False
check "--json: diagnostics carry lines" test "$(json_get '["diagnostics"][0]["line"]')" -gt 0

# Warnings alone pass, unless --strict.
mkdir -p "$T/warn-skill"
printf -- '---\nname: warn-skill\ndescription: Has an extra key.\nlang: en\n---\n# Body\n' >"$T/warn-skill/SKILL.md"
run skill lint "$T/warn-skill"
check "warnings only: exit 0" test "$(rc)" = 0
run skill lint --strict "$T/warn-skill"
check "warnings with --strict: exit 1" test "$(rc)" = 1

# A frontmatter that does not parse: one error, with the file and line once.
mkdir -p "$T/yaml-skill"
printf -- '---\nname: yaml-skill\ndescription: x\nbomb: &a [*a]\n---\n' >"$T/yaml-skill/SKILL.md"
run skill lint "$T/yaml-skill"
check "YAML alias: invalid" test "$(rc)" = 1
check "YAML alias: error on line 4, file named once" grep -qx "$T/yaml-skill/SKILL.md:4: error: YAML anchors and aliases are not supported" "$T/out"

run skill lint "$T/does-not-exist"
check "missing path: exit 2" test "$(rc)" = 2
check "missing path: 'skillctl: <what>: <why>' on stderr" grep -q "^skillctl: $T/does-not-exist: " "$T/err"
run skill lint
check "no path: exit 2" test "$(rc)" = 2
run skill frobnicate
check "unknown subcommand: exit 2" test "$(rc)" = 2

# show: entry point, interpreter and hash.
run skill show --json "$EXAMPLES/json-transform"
check "show: name" test "$(json_get '["name"]')" = json-transform
check "show: entry point" test "$(json_get '["entry_point"]["script"]')" = scripts/main.py
check "show: interpreter" test "$(json_get '["entry_point"]["interpreter"]')" = python3
dir_hash=$(json_get '["content_hash"]')
check "show: a sha256 content hash" test "${#dir_hash}" = 64

# show: what the skill says or names reaches the terminal escaped, never as escape sequences.
mkdir -p "$T/loud/scripts"
printf -- '---\nname: loud\ndescription: "\\e]0;pwned\\a"\nlicense: "\\e[31mred"\ncompatibility: "\\u009b2J"\nmetadata:\n  k: "\\e[2J"\n"x\\u009bkey": 1\n---\nBody\n' >"$T/loud/SKILL.md"
printf 'echo\n' >"$T/loud/scripts/$(printf 'run\302\2331m.sh')"
run skill show "$T/loud"
check "show: exit 0 on a loud skill" test "$(rc)" = 0
check "show: no ESC byte reaches the terminal" sh -c "! grep -q \"\$(printf '\\033')\" '$T/out'"
check "show: no C1 CSI reaches the terminal" sh -c "! grep -q \"\$(printf '\\302\\233')\" '$T/out'"
check "show: escaped license shown" grep -q 'License: \\x1b\[31mred' "$T/out"

# package: the archive has the <name>/ layout, leaves caches out, and hashes like its source.
cp -r "$EXAMPLES/json-transform" "$T/json-transform"
mkdir -p "$T/json-transform/scripts/__pycache__"
echo junk >"$T/json-transform/scripts/__pycache__/main.cpython-311.pyc"
echo junk >"$T/json-transform/.DS_Store"
run skill package "$T/json-transform" -o "$T/out.skill"
check "package: exit 0" test "$(rc)" = 0
check "package: entries under json-transform/" sh -c "unzip -Z1 '$T/out.skill' | grep -qv '^json-transform/' && exit 1 || exit 0"
check "package: SKILL.md inside" sh -c "unzip -Z1 '$T/out.skill' | grep -qx 'json-transform/SKILL.md'"
check "package: no __pycache__ or .DS_Store" sh -c "! unzip -Z1 '$T/out.skill' | grep -Eq '__pycache__|DS_Store'"
run skill show --json "$T/out.skill"
check "package: archive hashes to the folder's hash" test "$(json_get '["content_hash"]')" = "$dir_hash"
run skill show --json "$T/json-transform"
check "package: excluded files do not change the hash" test "$(json_get '["content_hash"]')" = "$dir_hash"

run skill package "$T/bad-skill" -o "$T/bad.skill"
check "package refuses an invalid skill" test "$(rc)" = 1
check "package leaves no file behind" test ! -e "$T/bad.skill"

# A zip with a symlink entry is refused, naming the entry.
mkdir -p "$T/evil/evil/scripts"
cp "$EXAMPLES/shell-report/SKILL.md" "$T/evil/evil/SKILL.md"
ln -s /etc/shadow "$T/evil/evil/scripts/leak"
(cd "$T/evil" && zip -qry "$T/evil.skill" evil)
run skill lint "$T/evil.skill"
check "symlink in archive: invalid" test "$(rc)" = 1
check "symlink in archive: message names the entry" grep -q 'scripts/leak' "$T/out" "$T/err"

# A tar renamed .skill is refused.
tar -C "$EXAMPLES" -cf "$T/tar.skill" shell-report
run skill show "$T/tar.skill"
check "renamed tar: refused" test "$(rc)" != 0
check "renamed tar: says it is not a zip" grep -qi 'zip' "$T/err"

# Without libarchive (the package missing: /dev/null bound over the library in a mount namespace
# of the commands' own, so as root only): the archive verbs fail naming the library and its
# package, and a folder is still linted. skilld's twin is tests/daemon/test-daemon.c.
lib=$(ldconfig -p | awk '$1 == "libarchive.so.13" { print $NF; exit }')
if [[ $(id -u) == 0 && -n $lib ]] && unshare --mount true 2>/dev/null; then
        without_lib() {
                # shellcheck disable=SC2016 # expanded by the inner sh
                unshare --mount --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
                        sh "$lib" "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"
                echo $? >"$T/rc"
        }
        without_lib skill show "$T/out.skill"
        check "no libarchive: show of an archive fails" test "$(rc)" != 0
        check "no libarchive: the message names the library and the package" \
                grep -q 'libarchive.so.13.*install libarchive13' "$T/err"
        without_lib skill package "$T/json-transform" -o "$T/nolib.skill"
        check "no libarchive: package fails" test "$(rc)" != 0
        check "no libarchive: package names the package" grep -q 'install libarchive13' "$T/err"
        check "no libarchive: package leaves no file behind" test ! -e "$T/nolib.skill"
        without_lib skill lint "$T/json-transform"
        check "no libarchive: a folder is linted" test "$(rc)" = 0
else
        ok "# SKIP no libarchive: needs root, unshare and libarchive.so.13"
fi

tap_finish
