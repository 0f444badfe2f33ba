# shellcheck shell=bash
# Package sources for the environment builds of the VM suite (tests.d/64-daemon-env-*.sh). The VM
# reaches no network, so the host fetches real packages once from its own configured sources and
# the overlay carries them to /usr/lib/skilld-vm/env-sources:
#   apt/  a flat apt repository: real .debs (`apt-get download`) the base image lacks, with a
#         Packages index (dpkg-scanpackages) and a Release file; the guest serves it over
#         http://127.0.0.1 and lists it [trusted=yes] in its sources, as a local mirror would be;
#   npm/  real tarballs (`npm pack`) of npm itself (the base has node but no npm, and Debian's npm
#         package drags in a compiler toolchain) and of small packages a test skill locks; the
#         guest serves them as a registry (packuments made there, where the port is known).
# Kept in the build directory, refetched only when the list below changes. Without network on
# the host nothing is staged, and the tests that need it skip, saying why. Sourced by run-vm.sh.

# Debian packages the base image does not have: a pure-Python one and one with a compiled
# extension, both from the archive the host is configured with.
VM_ENV_DEBS=(python3-tabulate python3-markupsafe)
# npm (a release that supports bookworm's node 18) and a package with one dependency.
VM_ENV_NPM=(npm@10.9.2 is-odd@3.0.1 is-number@6.0.0)

vm_env_sources_fetch() {
    local dir=$1 key tmp
    key=$(printf '%s\n' "${VM_ENV_DEBS[@]}" "${VM_ENV_NPM[@]}" | sha256sum | cut -c1-16)
    [[ -f "$dir/.key" && "$(cat "$dir/.key")" == "$key" ]] && return 0
    rm -rf "$dir"
    tmp="$dir.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp/apt" "$tmp/npm"
    # As root, apt downloads as _apt, which must be able to write there.
    chmod 0777 "$tmp/apt"
    (cd "$tmp/apt" && apt-get -q download "${VM_ENV_DEBS[@]}") >"$VM_WORK/env-sources.log" 2>&1 || return 1
    chmod 0755 "$tmp/apt"
    (cd "$tmp/apt" && dpkg-scanpackages --multiversion . >Packages 2>>"$VM_WORK/env-sources.log") || return 1
    {
        echo "Origin: skilld-vm"
        echo "Label: skilld-vm"
        echo "Date: $(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S UTC')"
        echo "SHA256:"
        printf ' %s %s Packages\n' "$(sha256sum <"$tmp/apt/Packages" | cut -d' ' -f1)" \
            "$(stat -c %s "$tmp/apt/Packages")"
    } >"$tmp/apt/Release"
    (cd "$tmp/npm" && npm pack --silent "${VM_ENV_NPM[@]}") >>"$VM_WORK/env-sources.log" 2>&1 || return 1
    printf '%s' "$key" >"$tmp/.key"
    mv "$tmp" "$dir"
}

# vm_stage_env_sources BUILD STAGE
vm_stage_env_sources() {
    local dir="$1/tests/vm/env-sources"

    if ! command -v dpkg-scanpackages >/dev/null || ! command -v npm >/dev/null || ! command -v apt-get >/dev/null; then
        vm_log "env sources: not staged (the host lacks dpkg-scanpackages, npm or apt-get)"
        return 0
    fi
    if ! vm_env_sources_fetch "$dir"; then
        rm -rf "$dir.tmp"
        vm_log "env sources: not staged (fetching failed: $(tail -n 3 "$VM_WORK/env-sources.log" | tr '\n' ' '))"
        return 0
    fi
    mkdir -p "$2/usr/lib/skilld-vm/env-sources"
    cp -a "$dir/apt" "$dir/npm" "$2/usr/lib/skilld-vm/env-sources/"
}
