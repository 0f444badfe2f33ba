#!/bin/bash
# The real-system test rig: boots a Debian 12 VM under qemu with systemd as PID 1, a system bus,
# polkitd, cgroup v2 with every controller and test users, installs the project from a meson
# build directory into it, runs the in-VM suite there and reports its TAP results. This is what
# `meson test --suite vm` runs; see tests/vm/README.md.
#
# Usage: run-vm.sh [--shell|--bench] [BUILD_DIR]   (BUILD_DIR defaults to ./build of the source tree)
#
# Environment: SKILLD_VM_ACCEL=tcg|kvm, SKILLD_VM_TIMEOUT (s), SKILLD_VM_CACHE_DIR,
# SKILLD_VM_REBUILD_BASE=1, SKILLD_VM_SUITES, SKILLD_VM_TESTS, SKILLD_VM_INJECT_FAILURE=1,
# SKILLD_VM_MEMORY (MiB), SKILLD_VM_CPUS, SKILLD_VM_CPU_MODEL, SKILLD_VM_TIMEOUT_MULTIPLIER,
# SKILLD_VM_TEST_TIMEOUT, SKILLD_VM_SHARDS, SKILLD_VM_STALL, SKILLD_VM_INJECT_FREEZE=1 (see
# README.md).
set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# debootstrap, chroot and friends live in sbin, which a user's PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$VM_DIR/lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=lib/base.sh
. "$VM_DIR/lib/base.sh"
# shellcheck source-path=SCRIPTDIR source=lib/overlay.sh
. "$VM_DIR/lib/overlay.sh"
# shellcheck source-path=SCRIPTDIR source=lib/env-sources.sh
. "$VM_DIR/lib/env-sources.sh"
# shellcheck source-path=SCRIPTDIR source=lib/watchdog.sh
. "$VM_DIR/lib/watchdog.sh"

VM_ACCEL=${SKILLD_VM_ACCEL:-tcg}
VM_TIMEOUT=${SKILLD_VM_TIMEOUT:-2400}

usage() {
    cat <<EOF
Usage: $0 [--shell|--bench] [BUILD_DIR]

Boots the skilld test VM with the project of BUILD_DIR installed and runs the in-VM suite
(tests/vm/tests.d and the meson suites '${VM_MESON_SUITES}'); exits non-zero when a test failed.
  --shell   boot the same VM with a root shell on this terminal instead (the suite is not run;
            run it there with skilld-vm-run-tests; poweroff or Ctrl-a x to leave)
  --bench   run the service benchmark (bench/service-bench.sh) in the VM instead of the suite
            and print its report (SKILLD_VM_BENCH_ROUNDS, SKILLD_BENCH_*: bench/README.md)
Logs of the last run: BUILD_DIR/tests/vm/last/. More in tests/vm/README.md.
EOF
}

# Writes the two archives one after the other: the kernel unpacks concatenated cpio archives
# in order, so the overlay lands on top of the cached base without repacking the base.
vm_make_initrd() {
    cat "$VM_BASE/base.cpio.lz4" "$VM_WORK/overlay.cpio.lz4" >"$VM_WORK/initrd.img"
}

# Fills the array QEMU with the command line for mode $1 (test or shell), its serial ports
# written into directory $2; $3 (K/N) makes it the K-th of N VMs sharing the suite, $4 (S) skips
# the first S tests of its plan (a VM before it ran them and froze).
vm_qemu_cmdline() {
    local mode=$1 out=$2 shard=${3:-} skip=${4:-0} append cpu
    append="console=ttyS0 panic=-1 mitigations=off skilld.vm=$mode"
    [[ $mode == shell ]] && append+=" quiet"
    [[ -n $shard ]] && append+=" skilld.vm.shard=$shard"
    [[ $skip -gt 0 ]] && append+=" skilld.vm.skip=$skip"
    # SKILLD_VM_TESTS: run only the tests whose names contain one of these words.
    if [[ -n "${SKILLD_VM_TESTS:-}" ]]; then
        [[ $SKILLD_VM_TESTS =~ ^[A-Za-z0-9_.+\ -]+$ ]] ||
            vm_die "SKILLD_VM_TESTS holds words of letters, digits and _.+-, not '$SKILLD_VM_TESTS'"
        append+=" skilld.vm.tests=$(tr -s ' ' ',' <<<"${SKILLD_VM_TESTS# }" | sed 's/,$//')"
    fi

    case $VM_ACCEL in
    # Not max: the suite ran faster on Nehalem (SSE4.2, no AVX; README.md, "The cache").
    tcg) cpu=Nehalem ;;
    kvm) cpu=host ;;
    *) vm_die "SKILLD_VM_ACCEL must be tcg or kvm, not '$VM_ACCEL'" ;;
    esac
    cpu=${SKILLD_VM_CPU_MODEL:-$cpu}

    QEMU=(qemu-system-x86_64 -accel "$VM_ACCEL" -cpu "$cpu"
          -m "${SKILLD_VM_MEMORY:-3072}" -smp "${SKILLD_VM_CPUS:-2}"
          -nodefaults -display none -no-reboot
          -kernel "$VM_BASE/vmlinuz" -initrd "$VM_WORK/initrd.img" -append "$append"
          -device virtio-rng-pci)
    if [[ $mode == shell ]]; then
        # The console (ttyS0) and qemu's monitor on this terminal: Ctrl-a x quits.
        QEMU+=(-serial mon:stdio -serial "file:$out/results.log")
    else
        # ttyS0: kernel and systemd messages; ttyS1: only what the test unit writes. The
        # monitor is for the watch (lib/watchdog.sh) to ask a frozen VM what it was doing; its
        # path is relative to $out, where qemu starts (a socket's path has at most 107 bytes).
        QEMU+=(-serial "file:$out/console.log" -serial "file:$out/results.log"
               -monitor "unix:monitor.sock,server=on,wait=off")
    fi
}

# Splits results.log of directory $1 into the TAP stream and the journal, by the markers
# test-main prints.
vm_split_results() {
    local out=$1
    tr -d '\r' <"$out/results.log" |
        awk -v tap="$out/tap.log" -v journal="$out/journal.log" '
            /^==> skilld-vm: tests begin/   { part = "tap"; next }
            /^==> skilld-vm: tests end/     { part = ""; next }
            /^==> skilld-vm: journal begin/ { part = "journal"; next }
            /^==> skilld-vm: journal end/   { part = ""; next }
            part == "tap"     { print > tap }
            part == "journal" { print > journal }'
    touch "$out/tap.log" "$out/journal.log"
}

# Whether the in-VM suite of directory $1 came to its end (test-main's marker after the last
# test), whatever became of the VM after.
vm_suite_ended() {
    grep -q '^==> skilld-vm: tests end' <(tr -d '\r' <"$1/results.log")
}

# Reads the tap.log of directory $1 (a VM whose qemu ended with $2, what vm_watch wrote to its
# qemu.rc; $3 names it in messages) and adds its counts to VM_PASSED, VM_SKIPPED and its failures to
# VM_FAILED_NAMES: a VM that did not run its plan whole counts as a failure. For each failed
# test, its last lines of output are shown.
vm_report() {
    local out=$1 qemu_rc=$2 what=$3 plan passed=0 failed=0 skipped=0 line name from
    local -a failed_names=() skipped_names=() pending=()

    while IFS= read -r line; do
        case $line in
        "1.."*) plan=${line#1..} ;;
        "# "*) pending+=("${line#\# }") ;;
        "ok "*"# SKIP"*)
            name=${line#ok }
            name=${name#* - }
            skipped=$((skipped + 1))
            skipped_names+=("${name% # SKIP*}")
            pending=() ;;
        "ok "*) passed=$((passed + 1)); pending=() ;;
        "not ok "*)
            name=${line#not ok }
            name=${name#* - }
            failed=$((failed + 1))
            failed_names+=("$name")
            vm_log "FAIL: $name; its last output:"
            from=$(( ${#pending[@]} > 25 ? ${#pending[@]} - 25 : 0 ))
            printf '    %s\n' "${pending[@]:from}" >&2
            pending=() ;;
        esac
    done <"$out/tap.log"

    vm_log "$what: $((passed + skipped + failed)) tests: $passed passed, $failed failed, $skipped skipped"
    # A skip inside the VM usually means a test did not see the real system it was written for.
    [[ $skipped -eq 0 ]] || vm_log "$what: skipped: ${skipped_names[*]}"
    if [[ $qemu_rc == 124 ]]; then
        vm_log "$what did not finish within SKILLD_VM_TIMEOUT=$VM_TIMEOUT s and was killed"
    elif [[ $qemu_rc == frozen:* ]]; then
        vm_log "$what froze (nothing on its serial ports for ${qemu_rc#frozen:} s) and was" \
            "stopped; qemu's state then: $out/frozen.txt"
    elif [[ $qemu_rc != 0 ]]; then
        vm_log "$what: qemu exited with status $qemu_rc"
    fi
    if ! vm_suite_ended "$out"; then
        if [[ -s "$out/console.log" ]]; then
            vm_log "$what: the in-VM suite never finished (boot failure, hang or crash); console tail:"
            tail -n 30 "$out/console.log" | sed 's/^/    /' >&2
        else
            vm_log "$what: the in-VM suite never finished and the console stayed empty: the" \
                "kernel never started (with SKILLD_VM_ACCEL=kvm, try tcg)"
        fi
        failed_names+=("($what: suite did not finish)")
    elif [[ -z "${plan:-}" || $plan -ne $((passed + skipped + failed)) ]]; then
        failed_names+=("($what: plan of ${plan:-?} tests, $((passed + skipped + failed)) reported)")
    fi

    VM_PASSED=$((VM_PASSED + passed))
    VM_SKIPPED=$((VM_SKIPPED + skipped))
    VM_FAILED=$((VM_FAILED + failed))
    VM_FAILED_NAMES+=("${failed_names[@]}")
}

# How many VMs share the suite: the guest runs its tests one at a time and keeps about one
# host core busy, so on a host with two or more cores two VMs (each taking its share of tests)
# finish the whole suite in about half the time. A selection of a few tests needs one.
vm_shards() {
    local n=${SKILLD_VM_SHARDS:-}
    if [[ -z $n ]]; then
        if [[ -n "${SKILLD_VM_TESTS:-}" || "${SKILLD_VM_BENCH:-0}" == 1 || $(nproc) -lt 2 ]]; then
            n=1
        else
            n=2
        fi
    fi
    [[ $n =~ ^[1-9]$ ]] || vm_die "SKILLD_VM_SHARDS must be a number of VMs from 1 to 9, not '$n'"
    echo "$n"
}

# vm_boot_watched OUT SHARD SKIP SECONDS [FREEZE]: boots one VM of the suite, its logs in OUT (the
# K/N of SHARD, the S of SKIP: vm_qemu_cmdline), killed after SECONDS, and watches it to its end
# (vm_watch, which FREEZE goes to, writes how it ended to OUT/qemu.rc).
vm_boot_watched() {
    local out=$1 shard=$2 skip=$3 seconds=$4 freeze=${5:-0}
    vm_qemu_cmdline test "$out" "$shard" "$skip"
    printf '%q ' "${QEMU[@]}" >"$out/qemu.cmdline"
    echo >>"$out/qemu.cmdline"
    # --foreground keeps qemu in our process group, so that Ctrl-C or meson killing the test
    # (both signal the group) takes qemu along instead of leaving it running.
    (cd "$out" && exec timeout --foreground --kill-after=10 "$seconds" "${QEMU[@]}" </dev/null \
        >"$out/qemu.log" 2>&1) &
    VM_CHILD=$!
    vm_watch "$VM_CHILD" "$out" "$freeze"
}

# vm_run_shard OUT SHARD WHAT: runs one VM's share of the suite (SHARD: K/N, or empty for the
# whole suite in one VM; WHAT names it in messages) to its end, and leaves its TAP in OUT/tap.log
# and how qemu ended in OUT/qemu.rc (vm_watch). A VM that froze before its tests ended is booted
# again, once, for the tests it had not finished, with what is left of SKILLD_VM_TIMEOUT: its
# logs move to OUT/froze/, and tap.log holds the TAP of both, one plan.
vm_run_shard() {
    local out=$1 shard=$2 what=$3 start reported left freeze=0 ended
    start=$(date +%s)
    VM_CHILD=""
    trap 'kill -TERM "$VM_CHILD" 2>/dev/null; exit 130' TERM
    [[ "${SKILLD_VM_INJECT_FREEZE:-0}" == 1 && ( -z $shard || $shard == 1/* ) ]] && freeze=1

    vm_boot_watched "$out" "$shard" 0 "$VM_TIMEOUT" "$freeze"
    vm_split_results "$out"
    ended=$(<"$out/qemu.rc")
    reported=$(grep -c -E '^(not )?ok ' "$out/tap.log") || true
    left=$((VM_TIMEOUT - ($(date +%s) - start)))
    if [[ $ended != frozen:* ]] || vm_suite_ended "$out"; then
        return 0                # ended by itself, or froze after its last test: nothing to rerun
    elif [[ $left -lt 60 ]]; then
        vm_log "$what froze with too little of SKILLD_VM_TIMEOUT left to boot another"
        return 0
    fi
    vm_log "$what froze after $reported tests (nothing on its serial ports for" \
        "${ended#frozen:} s; qemu's state then: $out/froze/frozen.txt); booting another VM" \
        "for the rest"
    mkdir "$out/froze"
    mv "$out"/{console,results,tap,journal,qemu}.log "$out"/{qemu.cmdline,qemu.rc,frozen.txt} \
        "$out/froze/"
    rm -f "$out/monitor.sock"

    vm_boot_watched "$out" "$shard" "$reported" "$left"
    vm_split_results "$out"
    {
        cat "$out/froze/tap.log"
        echo "# $what froze here; another VM ran the tests after the $reported that had reported"
        grep -v -E '^(TAP version|1\.\.)' "$out/tap.log"
    } >"$out/tap.merged"
    mv "$out/tap.merged" "$out/tap.log"
}

# Boots the VM(s) of the suite, waits for all, reports. With one VM its logs are VM_LAST's
# files; with N, each VM's are in VM_LAST/shard-K/ and tap.log there is their TAP one after
# the other.
vm_boot_tests() {
    local start shards k out shard what
    local -a pids=() outs=() whats=()
    start=$(vm_now)
    shards=$(vm_shards)
    VM_PASSED=0 VM_SKIPPED=0 VM_FAILED=0 VM_FAILED_NAMES=()

    for ((k = 1; k <= shards; k++)); do
        out=$VM_LAST shard="" what=VM
        if [[ $shards -gt 1 ]]; then
            out=$VM_LAST/shard-$k shard=$k/$shards what="VM $k of $shards"
            mkdir -p "$out"
        fi
        vm_run_shard "$out" "$shard" "$what" &
        pids+=("$!")
        outs+=("$out")
        whats+=("$what")
    done
    # Background jobs of a script ignore SIGINT: pass Ctrl-C (and meson's SIGTERM) on to the
    # VMs' runners, which hand it to timeout(1) and so to qemu.
    trap 'kill -TERM "${pids[@]}" 2>/dev/null; exit 130' INT TERM
    if [[ $shards -gt 1 ]]; then
        vm_log "booting $shards VMs ($VM_ACCEL, at most $VM_TIMEOUT s each), sharing the tests;" \
            "consoles: $VM_LAST/shard-*/console.log"
    else
        vm_log "booting ($VM_ACCEL, at most $VM_TIMEOUT s); console: $VM_LAST/console.log"
    fi

    for ((k = 1; k <= shards; k++)); do
        wait "${pids[k - 1]}" || true
        out=${outs[k - 1]}
        vm_report "$out" "$(cat "$out/qemu.rc" 2>/dev/null || echo lost)" "${whats[k - 1]}"
        if [[ $shards -gt 1 ]]; then
            { echo "# shard $k of $shards"; cat "$out/tap.log"; } >>"$VM_LAST/tap.log"
        fi
    done
    trap - INT TERM
    vm_log "VM$([[ $shards -gt 1 ]] && echo s) ran for $(vm_since "$start") s"

    printf 'vm: %d passed, %d failed\n' "$VM_PASSED" "$VM_FAILED"
    if [[ ${#VM_FAILED_NAMES[@]} -gt 0 ]]; then
        vm_log "FAILED: ${VM_FAILED_NAMES[*]}"
        vm_log "VM logs: $VM_LAST/ (console.log: serial console," \
            "journal.log: the VM's journal, tap.log: test output)"
        return 1
    fi
    vm_log "logs: $VM_LAST/"
    return 0
}

vm_boot_shell() {
    vm_qemu_cmdline shell "$VM_LAST"
    vm_log "booting a shell ($VM_ACCEL); run the suite with skilld-vm-run-tests [NAME...];"
    vm_log "leave with poweroff, or Ctrl-a x"
    exec "${QEMU[@]}"
}

main() {
    local mode=test build="" start
    start=$(vm_now)

    while [[ $# -gt 0 ]]; do
        case $1 in
        --shell) mode=shell ;;
        --bench)
            # Only the benchmark, with room for its store of 100 000 runs (the root is a tmpfs
            # of half the memory) and time for it.
            export SKILLD_VM_BENCH=1
            export SKILLD_VM_TESTS=${SKILLD_VM_TESTS:-service-bench}
            export SKILLD_VM_TEST_TIMEOUT=${SKILLD_VM_TEST_TIMEOUT:-1800}
            export SKILLD_VM_MEMORY=${SKILLD_VM_MEMORY:-6144}
            ;;
        -h|--help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        *) build=$1 ;;
        esac
        shift
    done
    build=${build:-$VM_DIR/../../build}
    [[ -f "$build/meson-info/meson-info.json" ]] || vm_die "$build is not a meson build directory"
    build=$(cd "$build" && pwd)

    VM_WORK="$build/tests/vm/work"
    VM_LAST="$build/tests/vm/last"
    rm -rf "$VM_WORK" "$VM_LAST"
    mkdir -p "$VM_WORK" "$VM_LAST"

    vm_ensure_tools qemu-system-x86_64:qemu-system-x86 cpio:cpio python3:python3 \
        flock:util-linux timeout:coreutils lz4:lz4
    vm_ensure_base
    vm_build_overlay "$build"
    vm_make_initrd
    if [[ $mode == shell ]]; then
        vm_boot_shell
    fi
    local rc=0
    vm_boot_tests || rc=$?
    if [[ "${SKILLD_VM_BENCH:-0}" == 1 ]]; then
        # The benchmark's report: its output in tap.log, without TAP's comment marks.
        awk '/^# service-bench: exit/ { exit } /^# / { sub(/^# /, ""); print }' "$VM_LAST/tap.log" \
            >"$VM_LAST/bench.txt"
        cat "$VM_LAST/bench.txt"
        vm_log "benchmark report: $VM_LAST/bench.txt"
    fi
    # The initrd is a copy of the cached base: do not keep 100 MB per build directory.
    rm -rf "$VM_WORK"
    vm_log "VM stage took $(vm_since "$start") s"
    return "$rc"
}

main "$@"
