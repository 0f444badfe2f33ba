# shellcheck shell=bash
# The per-run overlay: the project as `meson install --destdir` lays it out (or, with
# SKILLD_VM_INSTALL=deb, its Debian packages for the VM to install at boot), the rig's own files
# (rootfs/: units, users, polkit rules, the runner), the in-VM tests (tests.d/) and the build's
# meson tests of the suites that must run on the real system. Packed as a second, small cpio
# archive that the kernel unpacks over the cached base. Sourced by run-vm.sh.

# Suites of `meson test` whose executables also run inside the VM, as root.
VM_MESON_SUITES=${SKILLD_VM_SUITES:-real-system}
# Under TCG everything is several times slower than on the host.
VM_TIMEOUT_MULTIPLIER=${SKILLD_VM_TIMEOUT_MULTIPLIER:-4}
# Where the source and build trees are in the VM. Not their host paths: those may lie under
# /tmp, which the VM's tmpfiles.d empties at boot.
VM_SOURCE_ROOT=/srv/skilld-vm/source
VM_BUILD_ROOT=/srv/skilld-vm/build
# How the project gets into the image: deb (the default: the packages tests/package/build-deb.sh
# builds, installed by `apt-get install ./*.deb` in the VM before the tests, as an admin would;
# see test-main and tests.d/12-debian-package.sh) or meson (`meson install --destdir` into the
# overlay, for a build the packaging does not make, such as one with sanitizers).
VM_INSTALL=${SKILLD_VM_INSTALL:-deb}
# Where the packages wait in the image (test-main installs them from there).
VM_DEB_DIR=/usr/lib/skilld-vm/debs

# The build directory `meson install` stages the project from: $1 itself when its prefix is /usr,
# as a package's is, else a second build of the same source with --prefix=/usr and $1's build
# type, sanitizers and options, without the tests (the VM runs those from $1), kept in
# $1/tests/vm/prefix-usr and rebuilt incrementally. A /usr/local install cannot simply be moved:
# the binaries have their prefix compiled in (policy, skills, libexec), and dbus-daemon and polkitd
# read bus policies and actions only below /usr/share and /etc. Prints the directory.
vm_install_build() {
    local build=$1 dir="$1/tests/vm/prefix-usr" src prefix carried
    local -a opts
    prefix=$(python3 -c 'import json, sys
print(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "prefix"))' \
        "$build/meson-info/intro-buildoptions.json")
    if [[ $prefix == /usr ]]; then
        printf '%s\n' "$build"
        return
    fi
    src=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
        "$build/meson-info/meson-info.json")
    carried=$(python3 -c 'import json, sys
for o in json.load(open(sys.argv[1])):
    if o["name"] in ("buildtype", "b_sanitize", "strict", "man"):
        v = o["value"]
        print("-D%s=%s" % (o["name"], str(v).lower() if isinstance(v, bool) else v))' \
        "$build/meson-info/intro-buildoptions.json") || vm_die "reading the options of $build failed"
    mapfile -t opts <<<"$carried"
    opts+=(--prefix=/usr -Dtests=false -Dfuzz=false)
    # Set up again when the options differ from those it was set up with.
    if [[ ! -f "$dir/meson-info/meson-info.json" ||
          "$(cat "$dir/.vm-options" 2>/dev/null)" != "${opts[*]}" ]]; then
        rm -rf "$dir"
        meson setup "${opts[@]}" "$dir" "$src" >"$VM_WORK/setup-usr.log" 2>&1 || {
            cat "$VM_WORK/setup-usr.log" >&2
            vm_die "meson setup of the /usr build ($dir) failed"
        }
        printf '%s' "${opts[*]}" >"$dir/.vm-options"
    fi
    meson compile -C "$dir" >"$VM_WORK/compile-usr.log" 2>&1 || {
        cat "$VM_WORK/compile-usr.log" >&2
        vm_die "building $dir failed"
    }
    printf '%s\n' "$dir"
}

# Copies the regular files and symlinks listed NUL-separated on stdin, relative to $1, to the
# same paths under $2.
vm_copy_list() {
    tar -C "$1" --null --no-recursion -T - -cf - | tar -C "$2" -xf -
}

# Copies the source tree (fixtures, example skills) without .git and build directories to
# $VM_SOURCE_ROOT, and the build tree without objects and meson's state to $VM_BUILD_ROOT.
vm_stage_trees() {
    local src=$1 build=$2 stage=$3 top inner=/

    mkdir -p "$stage$VM_SOURCE_ROOT" "$stage$VM_BUILD_ROOT"
    # A build directory inside the source tree that .gitignore does not cover stays out too.
    [[ "$build" == "$src"/* ]] && inner=${build#"$src"/}/
    top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null || true)
    if [[ "$top" == "$src" ]]; then
        # Tracked and new files, as they are in the work tree; deleted ones are gone.
        (cd "$src" && git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do
                [[ "$f" == "$inner"* ]] && continue
                [[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"
            done) | vm_copy_list "$src" "$stage$VM_SOURCE_ROOT"
    else
        (cd "$src" && find . \( -name .git -o -type d -exec test -d '{}/meson-private' \; \) \
            -prune -o \( -type f -o -type l \) -print0) |
            vm_copy_list "$src" "$stage$VM_SOURCE_ROOT"
    fi
    (cd "$build" && find . \( -name '*.p' -o -name 'meson-*' -o -path ./tests/vm/work \
        -o -path ./tests/vm/last -o -path ./tests/vm/prefix-usr -o -path ./package \) -prune -o \( -type f -o -type l \) \
        ! -name '.ninja_*' ! -name build.ninja ! -name compile_commands.json -print0) |
        vm_copy_list "$build" "$stage$VM_BUILD_ROOT"
}

# The test SKILLD_VM_INJECT_FAILURE=1 adds, proving that a failing in-VM test fails the run and
# is named in the host's report.
vm_stage_injected_failure() {
    cat >"$1/99-injected-failure.sh" <<'EOF'
#!/bin/bash
# Added by run-vm.sh because SKILLD_VM_INJECT_FAILURE=1: fails on purpose.
echo "this test fails on purpose (SKILLD_VM_INJECT_FAILURE=1)"
exit 1
EOF
    chmod 0755 "$1/99-injected-failure.sh"
}

# The test `run-vm.sh --bench` (SKILLD_VM_BENCH=1) adds: bench/service-bench.sh, whose output
# the host prints from tap.log. The SKILLD_BENCH_* settings of the host are written into it.
vm_stage_bench() {
    local settings="" v
    for v in SKILLD_BENCH_USERS SKILLD_BENCH_STREAMS SKILLD_BENCH_SECONDS SKILLD_BENCH_STORED_RUNS \
        SKILLD_BENCH_COLD SKILLD_BENCH_PHASE_RUNS SKILLD_BENCH_BASELINE_SKILLCTL; do
        [[ -n "${!v:-}" ]] && settings+="export $v=$(printf '%q' "${!v}")"$'\n'
    done
    cat >"$1/90-service-bench.sh" <<EOF
#!/bin/bash
# Added by run-vm.sh --bench: the service benchmark (bench/service-bench.sh), not a test.
set -euo pipefail
# shellcheck source=/dev/null
. "\$SKILLD_VM_LIB"
$settings
exec "\$SKILLD_SOURCE_ROOT/bench/service-bench.sh" $(printf '%q' "${SKILLD_VM_BENCH_ROUNDS:-30}")
EOF
    chmod 0755 "$1/90-service-bench.sh"
}

# Fails when an ELF file of the stage needs a shared library neither the base nor the stage
# has: a clear message here beats a loader error inside the VM.
vm_check_libraries() {
    local stage=$1 f lib
    local -a missing=()
    local -A have=()

    while IFS= read -r lib; do
        have[$lib]=1
    done < <(awk -F'\t' '{ n = split($2, p, "/"); print p[n] }' "$VM_BASE/manifest"
             find "$stage" \( -type f -o -type l \) -name '*.so*' -printf '%f\n')

    while IFS= read -r -d '' f; do
        [[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" == '177ELF' ]] || continue
        while IFS= read -r lib; do
            [[ -n "${have[$lib]:-}" ]] || missing+=("${f#"$stage"} needs $lib")
        done < <(ldd "$f" 2>/dev/null | awk '$2 == "=>" { print $1 }')
    done < <(find "$stage" -type f -perm -u+x -print0)

    if [[ ${#missing[@]} -gt 0 ]]; then
        printf 'vm:   %s\n' "${missing[@]}" >&2
        vm_die "the base image lacks libraries the project needs:" \
            "add their packages to tests/vm/packages.list"
    fi
}

# Packs the stage as newc cpio owned by root, leaving out directories the base already has
# (the kernel would reset their owner and mode to the stage's) and directories reached through
# a top-level symlink of the base (usrmerge's /lib -> usr/lib).
vm_pack_overlay() {
    local stage=$1 out=$2

    (cd "$stage" && find . -mindepth 1 -printf '%y\t%p\n' | LC_ALL=C sort -t$'\t' -k2 |
        awk -F'\t' -v manifest="$VM_BASE/manifest" '
            BEGIN {
                while ((getline line < manifest) > 0) {
                    split(line, f, "\t")
                    base[f[2]] = f[1]
                    if (f[1] == "l" && f[2] !~ /^\.\/.*\//)
                        toplink[f[2]] = "./" f[3]
                }
            }
            {
                path = $2
                if (match(path, /^\.\/[^\/]+/) && (substr(path, 1, RLENGTH) in toplink))
                    path = toplink[substr(path, 1, RLENGTH)] substr(path, RLENGTH + 1)
                if ($1 == "d" && (path in base))
                    next
                print $2
            }' |
        cpio --create --format=newc --quiet --owner=0:0) | vm_compress >"$out"
}

# SKILLD_VM_INSTALL=deb: builds the packages of source tree $1 into build directory $2
# (BUILD/package/; those the 'package' suite just built from the same tree are kept), puts them in the stage $3 for test-main to install, and replaces the file list
# the tests check (written from meson's install list by meson-stage.py) with the packages' own,
# and the prefix with the packages' (/usr).
vm_stage_debs() {
    local src=$1 build=$2 stage=$3 lib_dir="$3/usr/lib/skilld-vm" deb

    "$VM_DIR/../package/build-deb.sh" --reuse "$src" "$build" >"$VM_WORK/package.log" 2>&1 || {
        cat "$VM_WORK/package.log" >&2
        vm_die "building the Debian packages failed (tests/package/build-deb.sh)"
    }
    mkdir -p "$stage$VM_DEB_DIR"
    : >"$lib_dir/installed.list"
    for deb in "$build"/package/*.deb; do
        [[ "$(basename "$deb")" == *-dbgsym_* ]] && continue
        cp "$deb" "$stage$VM_DEB_DIR/"
        # Files and symlinks, not directories; the packaging's own files (doc, lintian) aside.
        dpkg-deb --fsys-tarfile "$deb" | tar -tvf - | awk '$1 !~ /^d/ { print $6 }' |
            sed 's,^\.,,' | grep -v '^/usr/share/doc/\|^/usr/share/lintian/' >>"$lib_dir/installed.list"
    done
    sort -o "$lib_dir/installed.list" "$lib_dir/installed.list"
    sed -i 's,^SKILLD_PREFIX=.*,SKILLD_PREFIX=/usr,' "$lib_dir/project.env"
}

# Builds $VM_WORK/overlay.cpio.lz4 for build directory $1.
vm_build_overlay() {
    local build=$1 stage="$VM_WORK/overlay" lib_dir tests_dir src n_meson start install_build
    local -a suites
    start=$(vm_now)
    read -r -a suites <<<"$VM_MESON_SUITES"

    # Up to date before anything is copied from it; meson install then has nothing to build.
    meson compile -C "$build" >"$VM_WORK/compile.log" 2>&1 || {
        cat "$VM_WORK/compile.log" >&2
        vm_die "building $build failed"
    }

    case $VM_INSTALL in
    meson) install_build=$(vm_install_build "$build") ;;
    # Only for meson-stage.py's version and paths; vm_stage_debs replaces what comes from it.
    deb) install_build=$build ;;
    *) vm_die "SKILLD_VM_INSTALL must be meson or deb, not '$VM_INSTALL'" ;;
    esac

    rm -rf "$stage"
    lib_dir="$stage/usr/lib/skilld-vm"
    tests_dir="$lib_dir/tests.d"
    mkdir -p "$stage"
    # The rig's files first: they are normalized to world-readable, root-owned files, which
    # must not happen to the modes the project's install sets.
    cp -a "$VM_DIR/rootfs/." "$stage/"
    mkdir -p "$tests_dir"
    cp -a "$VM_DIR"/tests.d/. "$tests_dir/"
    if [[ "${SKILLD_VM_INJECT_FAILURE:-0}" == 1 ]]; then
        vm_stage_injected_failure "$tests_dir"
    fi
    if [[ "${SKILLD_VM_BENCH:-0}" == 1 ]]; then
        vm_stage_bench "$tests_dir"
    fi
    IFS=$'\t' read -r src n_meson < <(python3 "$VM_DIR/lib/meson-stage.py" "$build" "$lib_dir" \
        "$tests_dir" "$VM_TIMEOUT_MULTIPLIER" "$VM_SOURCE_ROOT" "$VM_BUILD_ROOT" "$install_build" \
        "${suites[@]}")
    [[ -n "$n_meson" ]] || vm_die "reading $build/meson-info failed"
    vm_stage_trees "$src" "$build" "$stage"
    chmod -R u+w,go-w,a+rX "$stage"

    if [[ $VM_INSTALL == deb ]]; then
        vm_stage_debs "$src" "$build" "$stage"
    else
        meson install -C "$install_build" --no-rebuild --destdir "$stage" --quiet \
            >"$VM_WORK/install.log" 2>&1 || {
            cat "$VM_WORK/install.log" >&2
            vm_die "meson install --destdir failed"
        }
    fi

    vm_stage_env_sources "$build" "$stage"
    vm_check_libraries "$stage"
    vm_pack_overlay "$stage" "$VM_WORK/overlay.cpio.lz4"
    vm_log "overlay: project $([[ $VM_INSTALL == deb ]] && echo "packaged (installed at boot)" || echo installed), $(find "$tests_dir" -type f ! -name "*.inc" | wc -l) in-VM tests" \
        "($n_meson from meson suites '$VM_MESON_SUITES'), packed in $(vm_since "$start") s" \
        "($(du -h "$VM_WORK/overlay.cpio.lz4" | cut -f1))"
}
