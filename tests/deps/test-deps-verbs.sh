#!/bin/bash
# skillctl skill show and lint on dependencies, through the built binary: declared and inferred
# ones with their origin (text and --json), the undeclared and unpinned warnings with file and
# line, the metadata keys' errors, and malformed declaration files. The import scan runs in the
# sandbox, hence root here like the other sandbox tests. Prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
FIXTURES=$SRC/tests/deps/fixtures
PYTHON=/usr/bin/python3

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP the import scan needs the sandbox, which needs root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

. "$(dirname "$0")/../lib/tap.sh"
run() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
deps_json() { $PYTHON -c 'import json,sys
d = json.load(open(sys.argv[1]))["dependencies"]
print(" ".join(x["ecosystem"] + ":" + x["name"] + ":" + x["origin"] for x in d["dependencies"]))' "$T/out"; }

# ---- pdf: declares nothing; inferred from its scripts ------------------------------------------
run skill show "$FIXTURES/pdf"
check "show pdf exits 0" test "$(rc)" = 0
check "show pdf lists pypdf as inferred, where it is first imported" \
        grep -Eq '^ Dependencies: python +pdf2image +inferred +scripts/convert_pdf_to_images.py:4$' "$T/out"
check "show pdf maps PIL to pillow" grep -Eq 'python +pillow +inferred +scripts/create_validation_image.py:4 \(import PIL\)' "$T/out"
check "show pdf leaves out sibling modules" sh -c "! grep -E '^ Dep|^  +python' '$T/out' | grep -Eq 'extract_form_field_info|check_bounding_boxes'"
run skill show --json "$FIXTURES/pdf"
check "show --json pdf" test "$(deps_json)" = \
        "python:pdf2image:inferred python:pdfplumber:inferred python:pillow:inferred python:pypdf:inferred"
run skill lint "$FIXTURES/pdf"
check "lint pdf: a skill declaring nothing is not told about its imports" grep -q 'valid (0 errors, 0 warnings)' "$T/out"

run skill show --json "$FIXTURES/office-docx"
check "show --json office-docx: own modules and helpers left out" test "$(deps_json)" = \
        "python:defusedxml:inferred python:lxml:inferred python:openpyxl:inferred"

# ---- declared: requirements file, metadata keys, an undeclared import --------------------------
run skill show "$FIXTURES/declared"
check "show declared names the requirements file" grep -q '^ Declarations: scripts/requirements.txt$' "$T/out"
check "show declared: a pinned requirement" \
        grep -Eq 'python +pillow==10.4.0 +file +scripts/requirements.txt:2, pinned' "$T/out"
check "show declared: a frontmatter system package" grep -Eq 'system +poppler-utils +frontmatter +SKILL.md:5$' "$T/out"
check "show declared: an inferred import a declaration covers" \
        grep -Eq 'python +numpy +inferred +scripts/report.py:1, declared' "$T/out"
run skill show --json "$FIXTURES/declared"
check "show --json declared: origins" sh -c "$PYTHON -c '
import json,sys
d = json.load(open(\"$T/out\"))[\"dependencies\"]
assert d[\"declared\"] is True and d[\"requirements_file\"] == \"scripts/requirements.txt\"
o = {(x[\"name\"], x[\"origin\"]) for x in d[\"dependencies\"]}
assert (\"xlsxwriter\", \"file\") in o and (\"pdftoppm\", \"frontmatter\") in o and (\"pyyaml\", \"inferred\") in o, o
'"
run skill lint "$FIXTURES/declared"
check "lint declared is valid, with warnings" test "$(rc)" = 0
check "lint warns on an unpinned requirement with its line" \
        grep -q 'declared/scripts/requirements.txt:3: warning: numpy is not pinned (>=1.24)' "$T/out"
check "lint warns on an undeclared import with its line" \
        grep -q "declared/scripts/report.py:3: warning: imports 'yaml' (python pyyaml), which the skill does not declare" "$T/out"
check "lint warns on an unpinned frontmatter npm package" \
        grep -q 'declared/SKILL.md:7: warning: @acme/x is not pinned' "$T/out"
run skill lint --strict "$FIXTURES/declared"
check "lint --strict turns them into a failure" test "$(rc)" = 1

# ---- node: specifiers; a package.json with its lockfile ----------------------------------------
cp -R "$FIXTURES/node-tool" "$T/node-tool"
cat >"$T/node-tool/scripts/package.json" <<'JSON'
{
  "name": "node-tool",
  "dependencies": {
    "docx": "^9.5.0",
    "chalk": "5.3.0"
  }
}
JSON
printf '{"lockfileVersion": 3, "packages": {"node_modules/docx": {"version": "9.5.1"}}}\n' \
        >"$T/node-tool/scripts/package-lock.json"
run skill show "$T/node-tool"
check "show node: the lockfile" grep -q '^ Declarations: scripts/package.json + scripts/package-lock.json$' "$T/out"
check "show node: the locked version" grep -Eq 'node +docx@\^9.5.0 +file +scripts/package.json:4, locked 9.5.1, pinned' "$T/out"
check "show node: a subpath import names its package" grep -Eq 'node +lodash +inferred +scripts/build.mjs:7 \(import lodash/get.js\)' "$T/out"
check "show node: builtins and relative imports left out" sh -c "! grep -Eq ' (fs|path|node:fs|util) ' '$T/out'"
check "show node: nothing from comments, strings or regexes" \
        sh -c "! grep -Eq 'not-a-dependency|regex-not-a-dep|template-not-a-dep' '$T/out'"
run skill lint "$T/node-tool"
check "lint node: undeclared uuid" grep -q "node-tool/scripts/legacy.cjs:4: warning: imports 'uuid'" "$T/out"

# ---- refusals ----------------------------------------------------------------------------------
mkdir -p "$T/broken/scripts"
printf -- '---\nname: broken\ndescription: x\nmetadata:\n  system-packages: "Poppler_Utils"\n  python-packages: "ok==1"\n---\nBody.\n' \
        >"$T/broken/SKILL.md"
printf 'pypdf==4.0\n-r other.txt\n' >"$T/broken/requirements.txt"
run skill lint "$T/broken"
check "lint: a bad metadata item is an error with its line" \
        grep -q "broken/SKILL.md:5: error: metadata.system-packages: 'Poppler_Utils' is not a Debian package name" "$T/out"
check "lint: a nested requirements file is an error with its line" \
        grep -q "broken/requirements.txt:2: error: .*-r other.txt.*not honoured" "$T/out"
check "lint exits 1" test "$(rc)" = 1
run skill show "$T/broken"
check "show refuses a malformed declaration, naming it" grep -q 'requirements.txt:2' "$T/err"
check "show exits 1" test "$(rc)" = 1

mkdir -p "$T/two/scripts"
printf -- '---\nname: two\ndescription: x\n---\nBody.\n' >"$T/two/SKILL.md"
touch "$T/two/requirements.txt" "$T/two/scripts/requirements.txt"
run skill lint "$T/two"
check "lint: two requirements files are an error" grep -q 'requirements.txt and scripts/requirements.txt' "$T/out"

tap_finish
