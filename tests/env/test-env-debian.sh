#!/bin/bash
# Environments from Debian's archive, as this machine's apt sources reach it: Python distributions
# mapped to Debian packages (Pillow -> python3-pil through dh-python's table), the closure the host
# lacks downloaded and unpacked in the sandbox, shared libraries they bring found at run time; a
# skill that declares nothing gets what its imports need; what no source provides is named.
# Needs root (namespaces). Exit 77 (skipped) when no apt source answers. Prints TAP lines.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}/tests/env
F=$SRC/fixtures/skills

if [ "$(id -u)" != 0 ]; then
        echo "# SKIP skillctl run needs root here"
        exit 77
fi

T=$(mktemp -d)
. "$SRC/lib.sh"
trap cleanup EXIT
cd "$T" || exit 1
export XDG_CACHE_HOME=$T/cache
# pip's own configuration reaches embedded builds (this machine sets PIP_FIND_LINKS): none here.
unset PIP_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
export PIP_CONFIG_FILE=/dev/null

if ! timeout 120 apt-get download -q python3-tabulate >"$T/probe" 2>&1; then
        echo "# SKIP no apt source answers: $(tail -2 "$T/probe")"
        exit 77
fi


# ---- requirements.txt only: compiled and pure-Python packages ---------------------------------
sk env build --local "$F/req-only"
check "req-only builds from Debian" rc_is 0
check "Pillow is Debian's python3-pil" bash -c "grep -q 'python pillow: .*python3-pil ' '$T/err'"
sk env show "$F/req-only"
check "env show lists the packages and their Debian names" \
        bash -c "grep -q 'python xlsxwriter' '$T/out' && grep -q 'python3-xlsxwriter' '$T/out'"
sk run --local -q "$F/req-only"
check "the run imports numpy, Pillow, tabulate, XlsxWriter and shapely" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q '3.14' '$T/out'"
if dpkg -s libgeos-c1v5 >/dev/null 2>&1; then
        ok "# SKIP the host has libgeos-c1v5: the library comes from /usr"
else
        check "the GEOS library shapely needs comes from the environment" out_has "geos: \['/env/debian/usr/lib/"
fi

# ---- a skill that declares nothing: its imports decide ------------------------------------------
sk env build --local "$F/doc-tools"
check "doc-tools builds from its inferred imports" rc_is 0
check "pypdf, defusedxml, lxml and openpyxl were inferred" \
        bash -c "grep -q 'pypdf' '$T/err' && grep -q 'defusedxml' '$T/err' && grep -q 'lxml' '$T/err' && grep -q 'openpyxl' '$T/err'"
sk run --local -q --script scripts/sheet.py "$F/doc-tools"
check "openpyxl runs" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'A1 = 42' '$T/out'"
/usr/bin/python3 - <<'PY'
import zipfile
with zipfile.ZipFile("t.docx", "w") as z:
    z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>')
    z.writestr("word/document.xml", '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>')
PY
sk run --local -q --script scripts/unpack.py --file t.docx="$T/t.docx" "$F/doc-tools" -- /work/t.docx
check "defusedxml and lxml run" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'word/document.xml' '$T/out'"

# ---- what no source provides --------------------------------------------------------------------
M=$T/missing
mkdir -p "$M/scripts"
printf -- '---\nname: missing\ndescription: Imports what no source provides.\n---\nRun it.\n' >"$M/SKILL.md"
printf 'import tabulate\nprint("tabulate ok")\nimport skilld_no_such_module\n' >"$M/scripts/main.py"
start=$(date +%s%N)
sk run --local -q "$M"
end=$(date +%s%N)
check "unbuilt: the run fails before the script starts, with 122" \
        bash -c "[ \"\$(cat '$T/rc')\" = 122 ] && ! grep -q 'tabulate ok' '$T/out' && grep -q 'skillctl env build' '$T/err'"
check "within seconds" test $(((end - start) / 1000000)) -lt 5000
sk env build --local "$M"
check "the build is partial (exit 3) and names the module" \
        bash -c "[ \"\$(cat '$T/rc')\" = 3 ] && grep -q 'missing: python:skilld-no-such-module' '$T/out'"
sk run --local -q "$M"
check "the run reaches the import and skillctl names the module (122)" \
        bash -c "[ \"\$(cat '$T/rc')\" = 122 ] && grep -q 'tabulate ok' '$T/out' && grep -q \"module 'skilld_no_such_module' is not in this skill's environment\" '$T/err'"

finish
