#!/bin/bash
# Environments from Debian's archive, as this machine's apt sources reach it: Python distributions
# mapped to Debian packages (Pillow -> python3-pil through dh-python's table), the closure the host
# lacks downloaded and unpacked in the sandbox, shared libraries they bring found at run time; a
# skill that declares nothing gets what its imports need; what no source provides is named; a
# Debian package whose version does not satisfy a pin is not taken.
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

# ---- version pins: Debian's package is taken only when its version satisfies them ----------------
# The upstream part of the version apt would install ("1:1.2.3-4+deb12u1" is 1.2.3).
upstream() { apt-cache policy "$1" | sed -n 's/^ *Candidate: \(.*:\)\{0,1\}\([^-]*\).*/\2/p'; }
TAB=$(upstream python3-tabulate)
PYPDF=$(upstream python3-pypdf)
V=$T/pins
mkdir -p "$V/scripts"
printf -- '---\nname: pins\ndescription: Pins versions.\n---\nRun it.\n' >"$V/SKILL.md"
printf 'import tabulate\nprint("tabulate", tabulate.__version__)\n' >"$V/scripts/main.py"
printf 'tabulate==%s\n' "${TAB%.*}.*" >"$V/requirements.txt"
sk env build --local --resolvers debian "$V"
check "tabulate==${TAB%.*}.* is satisfied by Debian's $TAB" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'python tabulate: Debian.s python3-tabulate' '$T/err'"
printf 'tabulate>=99\n' >"$V/requirements.txt"
sk env build --local --resolvers debian,pip "$V"
check "tabulate>=99 is not: the build fails naming it, with the versions (pip has no source)" \
        bash -c "[ \"\$(cat '$T/rc')\" = 1 ] && grep -q 'No source provided any .*: python tabulate (Debian has python3-tabulate $TAB, the skill requires tabulate>=99)' '$T/err'"
if [ -n "$PYPDF" ]; then
        printf 'tabulate~=%s\npypdf>=99\n' "$TAB" >"$V/requirements.txt"
        sk env build --local --resolvers debian "$V"
        check "a partial build keeps what did resolve (tabulate~=$TAB) and names pypdf>=99" \
                bash -c "[ \"\$(cat '$T/rc')\" = 3 ] && grep -q 'missing: python:pypdf (Debian has python3-pypdf $PYPDF, the skill requires pypdf>=99)' '$T/out' && ! grep -q 'missing: python:tabulate' '$T/out'"
        sk run --local -q "$V"
        check "and the run has Debian's tabulate" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'tabulate $TAB' '$T/out'"
else
        ok "# SKIP no python3-pypdf in this archive"
        ok "# SKIP no python3-pypdf in this archive"
fi

# What Debian does not satisfy goes to the next resolver: pip, here with a wheelhouse whose
# "tabulate 99.0" is a stand-in built by this test (no Python index is reachable from here).
if /usr/bin/python3 -c 'import setuptools, wheel, pip' 2>/dev/null; then
        mkdir -p "$T/tab99/tabulate" "$T/wh"
        printf '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "tabulate"\nversion = "99.0"\n' \
                >"$T/tab99/pyproject.toml"
        printf '__version__ = "99.0 (a stand-in built by test-env-debian.sh)"\n' >"$T/tab99/tabulate/__init__.py"
        if /usr/bin/python3 -m pip --isolated wheel -q --no-index --no-build-isolation --no-deps -w "$T/wh" "$T/tab99" >"$T/wheel.log" 2>&1; then
                printf 'tabulate>=99\n' >"$V/requirements.txt"
                sk env build --local --resolvers debian,pip --find-links "$T/wh" "$V"
                check "Debian's $TAB does not satisfy tabulate>=99: pip's wheelhouse provides it" \
                        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'Debian has python3-tabulate $TAB, the skill requires tabulate>=99; trying pip' '$T/err'"
                sk run --local -q "$V"
                check "and the run has pip's" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'tabulate 99.0 (a stand-in' '$T/out'"
                # The other order: what pip does not find goes to Debian.
                printf 'tabulate<1\n' >"$V/requirements.txt"
                sk env build --local --resolvers pip,debian --find-links "$T/wh" "$V"
                check "pip first: its wheelhouse has no tabulate<1, Debian's $TAB is next" \
                        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'Debian packages provide what pip did not find' '$T/err' && grep -q 'python tabulate: Debian.s python3-tabulate' '$T/err'"
                sk run --local -q "$V"
                check "and the run has Debian's" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'tabulate $TAB' '$T/out'"
                printf 'tabulate>=100\n' >"$V/requirements.txt"
                sk env build --local --resolvers pip,debian --find-links "$T/wh" "$V"
                check "neither: the reason names both" \
                        bash -c "[ \"\$(cat '$T/rc')\" = 1 ] && grep -q 'python tabulate (pip found no binary wheel .*, and Debian has python3-tabulate $TAB, the skill requires tabulate>=100)' '$T/err'"
        else
                not_ok "building the stand-in wheel" "$(tail -5 "$T/wheel.log")"
        fi
else
        ok "# SKIP building a wheel needs python3-pip, python3-setuptools and python3-wheel"
fi

finish
