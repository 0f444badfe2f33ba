# shellcheck shell=bash
# Helpers shared by the host side of the VM rig: messages, failing loudly, and installing the
# host tools the rig needs. Sourced by run-vm.sh; expects `set -euo pipefail`.

# Every host message is prefixed so that it stands out among meson's and qemu's output.
vm_log() {
    printf 'vm: %s\n' "$*" >&2
}

vm_die() {
    printf 'vm: ERROR: %s\n' "$*" >&2
    exit 1
}

# meson counts exit code 77 as a skipped test. The rig only skips on a developer's machine where
# it cannot install what it lacks; in CI (CI=true) a missing tool is an error, so that the VM
# suite never passes by not running.
vm_skip_or_die() {
    if [[ "${CI:-}" == "true" ]]; then
        vm_die "$* (CI=true: the VM suite must run, refusing to skip)"
    fi
    printf 'vm: SKIP: %s\n' "$*" >&2
    exit 77
}

# Seconds since the epoch with a fraction, for the timings the rig prints.
vm_now() {
    date +%s.%N
}

# Prints the seconds elapsed since $1 (a vm_now value) with one decimal.
vm_since() {
    awk -v a="$1" -v b="$(vm_now)" 'BEGIN { printf "%.1f", b - a }'
}

# apt-get update at most once per run: a fresh machine has no package lists, and the kernel
# download and tool installs below need them.
VM_APT_UPDATED=0
vm_apt_update() {
    if [[ "$VM_APT_UPDATED" == 0 ]]; then
        vm_log "apt-get update"
        apt-get update -qq >&2 || vm_die "apt-get update failed"
        VM_APT_UPDATED=1
    fi
}

# vm_ensure_tools PROGRAM:PACKAGE...: installs the packages whose program is missing. A fresh
# machine may lack qemu or debootstrap; as root we install them (the project's own files must
# install what it needs), otherwise we cannot and say which packages are missing.
vm_ensure_tools() {
    local pair prog pkg
    local -a missing=()

    for pair in "$@"; do
        prog=${pair%%:*}
        pkg=${pair#*:}
        if ! command -v "$prog" >/dev/null 2>&1 && ! [[ -x "/usr/sbin/$prog" ]]; then
            missing+=("$pkg")
        fi
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0

    if [[ $EUID -ne 0 ]]; then
        vm_skip_or_die "missing host packages: ${missing[*]}" \
            "(run as root, or: apt-get install ${missing[*]})"
    fi
    vm_apt_update
    vm_log "installing host packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >&2 || vm_die "apt-get install ${missing[*]} failed"
    for pair in "$@"; do
        prog=${pair%%:*}
        command -v "$prog" >/dev/null 2>&1 ||
            vm_die "$prog still missing after installing ${pair#*:}"
    done
}
