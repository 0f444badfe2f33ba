# shellcheck shell=bash
# The host's watch over a running VM. A guest that writes nothing to either serial port for
# SKILLD_VM_STALL seconds is frozen, not slow: while the suite runs, test-main prints a line every
# 15 s whatever the tests do. Before the suite's first line the limit is twice that: the kernel
# unpacks the initramfs without a word (16 s alone, over 30 with two VMs on a busy host). Under TCG
# a guest once stopped dead in CI in its second test, and the run waited out SKILLD_VM_TIMEOUT
# (40 minutes) for nothing. The watch writes down what qemu and its vCPUs were doing, then stops
# that VM, so that the rig can boot another to go on. Sourced by run-vm.sh.

VM_STALL=${SKILLD_VM_STALL:-120}

# Bytes written so far to the serial logs of the VM whose logs are in directory $1.
vm_serial_bytes() {
    stat -c %s "$1/console.log" "$1/results.log" 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'
}

# vm_monitor OUT COMMAND: the answer of qemu's human monitor (its socket in OUT) to COMMAND,
# without the monitor's prompt and terminal escapes; a note instead when it does not answer
# within 10 s (a qemu whose main loop is stuck).
vm_monitor() {
    python3 - "$1/monitor.sock" "$2" <<'EOF'
import os
import re
import socket
import sys
import time

path, command = sys.argv[1:3]
data = b''
try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        os.chdir(os.path.dirname(path))     # qemu's own path to it is as short
        s.connect(os.path.basename(path))
        s.sendall(command.encode() + b'\n')
        s.settimeout(2)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
except OSError as e:
    print(f'(the monitor did not answer: {e})')
    sys.exit(0)
text = re.sub(r'\x1b\[[0-9;]*[A-Za-z]|\r', '', data.decode(errors='replace'))
print('\n'.join(line for line in text.splitlines()
                if not line.startswith(('QEMU ', '(qemu)'))))
EOF
}

# vm_freeze_record PID OUT SECONDS: writes OUT/frozen.txt: how the VM's output ended (SECONDS
# ago), and qemu's state (PID is the timeout(1) that runs it) as the host and its monitor see it.
vm_freeze_record() {
    local pid=$1 out=$2 seconds=$3 qemu task
    qemu=$(pgrep -P "$pid" | head -n 1) || true
    {
        echo "# nothing on either serial port for $seconds s; the last lines of the tests' port:"
        tr -d '\r' <"$out/results.log" 2>/dev/null | tail -n 15
        echo "# the last lines of the console:"
        tr -d '\r' <"$out/console.log" 2>/dev/null | tail -n 5
        if [[ -n $qemu ]]; then
            echo "# qemu's threads (pid $qemu): name, state, user and system clock ticks"
            for task in /proc/"$qemu"/task/*; do
                awk '{ sub(/^[0-9]+ \(/, ""); split($0, f, ") "); split(f[2], g, " ");
                       printf "%s %s %s %s\n", f[1], g[1], g[12], g[13] }' "$task/stat" \
                    2>/dev/null || true
            done
        fi
        echo "# qemu's monitor: info status, info cpus, info registers -a"
        vm_monitor "$out" "info status"
        vm_monitor "$out" "info cpus"
        vm_monitor "$out" "info registers -a"
    } >"$out/frozen.txt" 2>&1
}

# vm_watch PID OUT [FREEZE]: waits for the VM that timeout(1) PID runs (logs in OUT) to end and
# writes how it ended to OUT/qemu.rc: qemu's exit status, or "frozen:SECONDS" when it fell silent
# for VM_STALL seconds (twice that before the suite starts) and was recorded (vm_freeze_record)
# and stopped. FREEZE=1
# pauses the guest (the monitor's `stop`) once its first test has reported, as a frozen guest
# looks: SKILLD_VM_INJECT_FREEZE proves this watch with it.
vm_watch() {
    local pid=$1 out=$2 freeze=${3:-0} bytes last=-1 since limit rc=0
    since=$(date +%s)
    while kill -0 "$pid" 2>/dev/null; do
        bytes=$(vm_serial_bytes "$out")
        limit=$VM_STALL
        [[ -s "$out/results.log" ]] || limit=$((2 * VM_STALL))
        if [[ $bytes != "$last" ]]; then
            last=$bytes
            since=$(date +%s)
        elif (($(date +%s) - since >= limit)); then
            vm_freeze_record "$pid" "$out" "$limit"
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" || true
            echo "frozen:$limit" >"$out/qemu.rc"
            return 0
        fi
        if [[ $freeze == 1 ]] && grep -q -a -E '^(not )?ok 1 ' "$out/results.log" 2>/dev/null; then
            vm_log "SKILLD_VM_INJECT_FREEZE=1: pausing the guest after its first test"
            vm_monitor "$out" stop >/dev/null
            freeze=0
        fi
        sleep 2
    done
    wait "$pid" || rc=$?
    echo "$rc" >"$out/qemu.rc"
    return 0
}
