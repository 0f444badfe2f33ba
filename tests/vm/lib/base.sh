# shellcheck shell=bash
# The cached base image: a Debian minbase tree with the packages of packages.list, packed once
# as a compressed cpio archive, plus the kernel to boot it with. It holds packages only, never
# the project, so it only changes when packages.list or this file changes; the project and the
# tests go into a second, small archive built on every run (overlay.sh). Sourced by run-vm.sh.

VM_SUITE=${SKILLD_VM_SUITE:-bookworm}

# Where bases live: outside the source tree, so that clean clones share them and `git clean`
# does not throw 90 s of debootstrap away.
vm_cache_root() {
    if [[ -n "${SKILLD_VM_CACHE_DIR:-}" ]]; then
        printf '%s\n' "$SKILLD_VM_CACHE_DIR"
    elif [[ $EUID -eq 0 ]]; then
        printf '%s\n' /var/cache/skilld-vm
    else
        printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/skilld-vm"
    fi
}

# The package list without comments, one per line.
vm_packages() {
    sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$VM_DIR/packages.list"
}

# The cache key: what the base is made of (package list, this script, the suite). The mirror is
# left out on purpose: any mirror of the suite yields the same base.
vm_base_key() {
    { vm_packages; cat "$VM_DIR/lib/base.sh"; echo "$VM_SUITE"; } | sha256sum | cut -c1-16
}

# The archive URL of $VM_SUITE's main component, as this machine's apt configuration has it
# (one-line .list or deb822 .sources alike: apt parses them for us; --no-release-info reads the
# sources alone, so a machine that never ran apt-get update works too). No mirror is ever written
# into the repository.
vm_apt_mirror() {
    # shellcheck disable=SC2016 # $(...) are apt's format fields, not shell
    apt-get indextargets --no-release-info --format '$(RELEASE) $(COMPONENT) $(REPO_URI)' \
        'Created-By: Packages' 2>/dev/null |
        awk -v s="$VM_SUITE" '$1 == s && $2 == "main" { print $3; exit }'
}

# Downloads the cloud kernel through apt (the metapackage names the current ABI package) and
# leaves vmlinuz and its config in $1. Its drivers for virtio disks and 9p are modules, which is
# why the root is an initramfs and no module is needed.
vm_fetch_kernel() {
    local out=$1 tmp dep
    tmp=$(mktemp -d)
    # apt drops to user _apt to download and warns when it cannot write there.
    chmod 0777 "$tmp"
    if ! apt-cache show linux-image-cloud-amd64 >/dev/null 2>&1; then
        vm_apt_update
    fi
    (cd "$tmp" && apt-get download -qq linux-image-cloud-amd64 >&2) ||
        vm_die "apt-get download linux-image-cloud-amd64 failed"
    dep=$(dpkg-deb -f "$tmp"/linux-image-cloud-amd64_*.deb Depends | tr ',' '\n' |
          awk '/linux-image-[0-9]/ { print $1; exit }')
    [[ -n "$dep" ]] || vm_die "linux-image-cloud-amd64 depends on no linux-image-6.* package"
    (cd "$tmp" && apt-get download -qq "$dep" >&2) || vm_die "apt-get download $dep failed"
    mkdir "$tmp/x"
    dpkg-deb -x "$tmp/$dep"_*.deb "$tmp/x"
    cp "$tmp"/x/boot/vmlinuz-* "$out/vmlinuz"
    cp "$tmp"/x/boot/config-* "$out/kernel.config"
    echo "$dep" >"$out/kernel.version"
    rm -rf "$tmp"
}

# Adjusts the debootstrapped tree $1 to boot as an initramfs under qemu. Only generic VM
# settings go here; everything about skilld and its tests goes into the overlay.
vm_customize_tree() {
    local root=$1

    # The kernel runs /init from the initramfs; systemd then finds no /etc/initrd-release
    # and boots the tree as the real root.
    ln -sfn /lib/systemd/systemd "$root/init"

    # Without udev (left out: it slows the boot) dev-ttyS0.device never appears and
    # serial-getty@ttyS0 holds multi-user.target for its 90 s device timeout. The console
    # shell of --shell is a unit of its own (rootfs/), bound to no device unit.
    ln -sfn /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
    ln -sfn /dev/null "$root/etc/systemd/system/getty@tty1.service"

    echo skilld-vm >"$root/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\tskilld-vm\n' >"$root/etc/hosts"

    # A fixed, initialized machine id: with none, systemd treats every boot as the first
    # and systemd-firstboot may wait for answers on the console.
    if ! grep -qE '^[0-9a-f]{32}$' "$root/etc/machine-id" 2>/dev/null; then
        od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$root/etc/machine-id"
        echo >>"$root/etc/machine-id"
    fi

    # sshd's host keys, made once here rather than at every boot (openssh-server's postinst
    # makes them too; -A only fills in what is missing). Every VM of a base shares them: they
    # guard a loopback connection inside a throwaway VM.
    if [[ -x "$root/usr/bin/ssh-keygen" ]]; then
        chroot "$root" /usr/bin/ssh-keygen -A >/dev/null
    fi

    # Every byte of the tree is unpacked into guest RAM at each boot and packed once here:
    # documentation, translations and apt's caches are dead weight.
    rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
           "$root"/usr/share/locale/* "$root"/var/cache/apt/*.bin \
           "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*_Packages \
           "$root"/var/lib/apt/lists/*_Release* "$root"/var/log/*.log
}

# Compresses stdin to stdout as the archives of the initramfs are: LZ4 in its legacy frames, the
# one LZ4 format the kernel unpacks. The kernel inflates both archives at every boot, emulated:
# the base alone took 11.5 s as gzip -1, 6 s as LZ4 (5 s uncompressed, at 2.7 times the size);
# an initramfs of twice the base, 29.6 s against 16.8 (the means of three boots each).
vm_compress() {
    lz4 -l -1 -q
}

# Packs directory $1 into the compressed (vm_compress) newc cpio $2, keeping owners and modes
# (we run as root).
vm_pack_cpio() {
    local dir=$1 out=$2
    shift 2
    (cd "$dir" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
        cpio --null --create --format=newc --quiet "$@") | vm_compress >"$out"
}

# Builds the base into the new directory $1: debootstrap, customize, kernel, pack, manifest.
vm_build_base() {
    local out=$1 mirror tree start pkgs
    start=$(vm_now)

    [[ $EUID -eq 0 ]] || vm_skip_or_die "building the VM base image needs root (debootstrap)"
    vm_ensure_tools debootstrap:debootstrap cpio:cpio dpkg-deb:dpkg lz4:lz4
    mirror=$(vm_apt_mirror)
    [[ -n "$mirror" ]] || vm_die "no '$VM_SUITE main' source in this machine's apt configuration"

    pkgs=$(vm_packages | paste -sd, -)
    tree="$out/tree"
    mkdir -p "$tree" "$VM_CACHE/debs"
    vm_log "building the base image: debootstrap $VM_SUITE from $mirror (1 to 2 minutes)"
    if ! debootstrap --variant=minbase --include="$pkgs" --cache-dir="$VM_CACHE/debs" \
            "$VM_SUITE" "$tree" "$mirror" >"$out/debootstrap.log" 2>&1; then
        tail -n 30 "$out/debootstrap.log" >&2
        vm_die "debootstrap failed; log: $out/debootstrap.log"
    fi
    vm_customize_tree "$tree"
    vm_fetch_kernel "$out"

    # Type, path and link target of every entry: the overlay skips directories the base
    # already has (so it never resets their owner or mode), and the rig checks that every
    # library a project binary needs is in the base.
    (cd "$tree" && find . -mindepth 1 -printf '%y\t%p\t%l\n') >"$out/manifest"
    # shellcheck disable=SC2016 # dpkg-query's format fields
    (chroot "$tree" dpkg-query -W -f '${Package} ${Version}\n') >"$out/packages"
    vm_pack_cpio "$tree" "$out/base.cpio.lz4"
    rm -rf "$tree"
    vm_log "base image built in $(vm_since "$start") s" \
        "($(du -h "$out/base.cpio.lz4" | cut -f1) packed)"
}

# Sets VM_BASE to a ready base directory (base.cpio.lz4, vmlinuz, manifest), building it under a
# lock when the cache has none for the current key. Older bases are removed once a new one is in.
vm_ensure_base() {
    local key dir tmp
    VM_CACHE=$(vm_cache_root)
    key=$(vm_base_key)
    dir="$VM_CACHE/base-$key"
    mkdir -p "$VM_CACHE"

    exec {lock_fd}>"$VM_CACHE/lock"
    flock "$lock_fd"
    # Holding the lock, any building-* directory is the remains of a killed build.
    find "$VM_CACHE" -mindepth 1 -maxdepth 1 -name 'building-*' -exec rm -rf {} +
    if [[ "${SKILLD_VM_REBUILD_BASE:-0}" == 1 && -d "$dir" ]]; then
        rm -rf "$dir"
    fi
    if [[ -f "$dir/ready" ]]; then
        vm_log "base image: cached ($dir)"
    else
        tmp=$(mktemp -d "$VM_CACHE/building-XXXXXX")
        # A failed build must not leave a half base behind for the next run.
        trap 'rm -rf "$tmp"' EXIT
        vm_build_base "$tmp"
        touch "$tmp/ready"
        # mktemp made it 0700; others may read a base (SKILLD_VM_CACHE_DIR shared).
        chmod 0755 "$tmp"
        rm -rf "$dir"
        mv "$tmp" "$dir"
        trap - EXIT
        find "$VM_CACHE" -mindepth 1 -maxdepth 1 -name 'base-*' ! -name "base-$key" \
            -exec rm -rf {} +
    fi
    flock -u "$lock_fd"
    exec {lock_fd}>&-
    # shellcheck disable=SC2034 # read by overlay.sh and run-vm.sh
    VM_BASE=$dir
}
