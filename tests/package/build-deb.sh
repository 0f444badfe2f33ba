#!/bin/bash
# Builds the Debian packages of this source tree the way a maintainer does
# (`dpkg-buildpackage -us -uc -b`), from a copy of the tree in the build directory, since
# dpkg-buildpackage writes its .deb files next to the tree it builds; then checks them: lintian
# reports no error and no warning that debian/*.lintian-overrides does not explain, and the
# packages hold what they must. The meson suite 'package' runs it; its .debs are left in
# BUILD_DIR/package/ (the VM rig installs them from there with SKILLD_VM_INSTALL=deb).
#
# Usage: build-deb.sh [--reuse] SOURCE_DIR BUILD_DIR
# --reuse: packages that this script built and checked from the very same tree (same files, same
# contents: BUILD_DIR/package/source.sha256) are kept as they are instead of built again; the VM
# rig asks so, right after the 'package' suite built them in the same meson run.
# Environment: DEB_BUILD_OPTIONS (default nocheck: the unit suite runs in the same CI anyway).
set -euo pipefail

reuse=false
if [[ ${1:-} == --reuse ]]; then
    reuse=true
    shift
fi
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
out="$build/package"
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS-nocheck}

# The files the packages are built from, NUL-separated: the tree as git sees it (tracked and new
# files, no build directories), else everything but .git and meson build directories.
source_files() {
    if [[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" == "$src" ]]; then
        (cd "$src" && git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do [[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"; done)
    else
        (cd "$src" && find . \( -name .git -o -type d -exec test -d '{}/meson-private' \; \) -prune \
            -o \( -type f -o -type l \) -print0)
    fi
}

# One digest over those files' names, modes, link targets and contents.
source_digest() {
    source_files | LC_ALL=C sort -z |
        tar -C "$src" --null --no-recursion -T - --sort=none --mtime=@0 --owner=0 --group=0 \
            --numeric-owner -cf - | sha256sum | cut -d' ' -f1
}

if $reuse && [[ -f "$out/source.sha256" ]] && compgen -G "$out/*.deb" >/dev/null &&
    [[ "$(cat "$out/source.sha256")" == "$(source_digest)" ]]; then
    echo "the packages in $out were built and checked from this very tree: kept"
    ls -l "$out"/*.deb
    exit 0
fi

missing=()
for tool in dpkg-buildpackage:dpkg-dev dh:debhelper rst2man:python3-docutils; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "SKIP: install ${missing[*]} to build the Debian package" >&2
    exit 77
fi

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
rm -rf "$out"
mkdir -p "$out/src"
tree="$out/src/skilld-$version"
mkdir -p "$tree"
digest=$(source_digest)
source_files | tar -C "$src" --null --no-recursion -T - -cf - | tar -C "$tree" -xf -

echo "dpkg-buildpackage -us -uc -b in $tree"
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
    tail -n 60 "$out/build.log" >&2
    echo "FAIL: dpkg-buildpackage failed; the whole log: $out/build.log" >&2
    exit 1
fi
mv "$out/src"/*.deb "$out/src"/*.changes "$out/src"/*.buildinfo "$out/"
rm -rf "$out/src"
ls -l "$out"/*.deb

fail=0
# What each package must hold (a path, or a glob that must match).
check_has() {
    local deb=$1 path=$2
    if ! dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's,^\.,,' | grep -qx -- "$path"; then
        echo "FAIL: $(basename "$deb") lacks $path" >&2
        fail=1
    fi
}
skilld_deb=$(ls "$out"/skilld_*.deb)
skillctl_deb=$(ls "$out"/skillctl_*.deb)
for p in /usr/libexec/skilld /lib/systemd/system/skilld.service /lib/systemd/system/skilld.socket \
         /lib/systemd/system/skilld.slice /lib/systemd/system/dbus-io.skilld.Skilld1.service \
         /usr/share/dbus-1/system.d/io.skilld.Skilld1.conf \
         /usr/share/dbus-1/system-services/io.skilld.Skilld1.service \
         /usr/share/polkit-1/actions/io.skilld.policy /usr/lib/tmpfiles.d/skilld.conf \
         /usr/share/skilld/policy.yaml /usr/lib/systemd/catalog/skilld.catalog \
         /usr/share/man/man8/skilld.8.gz \
         /usr/share/man/man5/skilld-policy.5.gz /usr/share/man/man5/io.skilld.Skilld1.5.gz; do
    check_has "$skilld_deb" "$p"
done
for p in /usr/bin/skillctl /usr/share/man/man1/skillctl.1.gz /usr/share/bash-completion/completions/skillctl \
         /usr/share/zsh/vendor-completions/_skillctl /usr/share/fish/vendor_completions.d/skillctl.fish; do
    check_has "$skillctl_deb" "$p"
done

# Libraries skillctl dlopen()s, which dh_shlibdeps cannot see: declared by hand in its Depends.
skillctl_depends=$(dpkg-deb -f "$skillctl_deb" Depends)
for lib in libarchive13 libseccomp2 libsystemd0; do
    if ! grep -qE "(^|, )$lib( |,|$)" <<<"$skillctl_depends"; then
        echo "FAIL: skillctl's Depends lack $lib, which it loads with dlopen(): $skillctl_depends" >&2
        fail=1
    fi
done

# No unit is enabled or started on install; the service is stopped on removal.
postinst=$(dpkg-deb --ctrl-tarfile "$skilld_deb" | tar -xOf - ./postinst)
prerm=$(dpkg-deb --ctrl-tarfile "$skilld_deb" | tar -xOf - ./prerm)
if grep -q 'deb-systemd-invoke start\|_dh_action=start' <<<"$postinst"; then
    echo "FAIL: skilld's postinst starts a unit on install:" >&2
    echo "$postinst" >&2
    fail=1
fi
if ! grep -q 'deb-systemd-invoke stop skilld.socket skilld.service' <<<"$prerm"; then
    echo "FAIL: skilld's prerm does not stop the service on removal" >&2
    fail=1
fi
if ! grep -q 'systemd-tmpfiles .*--create' <<<"$postinst"; then
    echo "FAIL: skilld's postinst does not create its tmpfiles.d directories" >&2
    fail=1
fi

if command -v lintian >/dev/null; then
    # Errors and warnings fail; overrides (with their reasons) are in debian/*.lintian-overrides.
    if ! lintian --fail-on error,warning --tag-display-limit 0 "$out"/*.changes \
        >"$out/lintian.log" 2>&1; then
        cat "$out/lintian.log" >&2
        echo "FAIL: lintian reports errors or warnings" >&2
        fail=1
    else
        cat "$out/lintian.log"
    fi
else
    echo "lintian is not installed: the packages were built but not linted" >&2
fi
# Only packages that passed every check may be reused.
[[ $fail != 0 ]] || echo "$digest" >"$out/source.sha256"
exit "$fail"
