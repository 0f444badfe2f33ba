#!/bin/bash
# The daemon's adversarial case D13 (tests/security/daemon/README.md): a skill run through the
# daemon tries the daemon's private socket, the system bus and the abstract sockets of the host;
# none connects (the root socket /run/skilld/private is there while skilld runs, and root's: the
# run's uid is not root, and the sandbox has no /run of the host), and skilld (same pid) answers
# the caller's GetRun while it tries.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'
trap 'systemctl stop skilld.socket' EXIT
systemctl start skilld.socket
# The abstract sockets the host has, as the sandbox would have to name them.
mapfile -t abstract < <(awk 'NR > 1 && $8 ~ /^@/ { print substr($8, 2) }' /proc/net/unix | sort -u | head -n 20)
echo "host abstract sockets tried: ${#abstract[@]}"

probe=$(make_skill probe "$(cat <<'PY'
import socket, sys, time
paths = ["/run/skilld/bus", "/run/skilld/private", "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket",
         "/run/systemd/private", "/run/systemd/journal/socket"]
paths += ["\0" + a for a in sys.argv[1:]]
for p in paths:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
        print("CONNECTED", repr(p))
    except OSError as e:
        print("refused", repr(p), e.errno)
    finally:
        s.close()
time.sleep(3)
PY
)" py)
id=$(call alice run "$probe" "${abstract[@]}")
pid=$(daemon_main_pid)
assert_eq "o \"/io/skilld/Skilld1/run/$id\"" \
    "$(as_user alice busctl --system call "${MANAGER[@]}" GetRun s "$id")" "GetRun while the probe runs"
assert_eq "finished succeeded 0" "$(call alice wait "$id")" "the probe run"
out=$(call alice log "$id" stdout)
echo "$out"
[[ $out == *refused* ]] || fail "the probe printed nothing: $out"
[[ $out != *CONNECTED* ]] || fail "a socket of the host was reachable from a run: $out"
assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid after the probe"
[[ -S /run/skilld/private ]] || fail "no root socket while skilld ran: the probe proved nothing of it"
echo "D13 no host socket reachable from a run"
