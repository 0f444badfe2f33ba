#!/bin/bash
# skilld.socket: the same API on the private socket /run/skilld/bus, a direct connection with no
# bus daemon in between. A connection starts the service (socket activation); calls are
# authorized with polkit as on the bus, the caller being a unix-process subject.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 5s'
trap 'systemctl stop skilld.socket' EXIT
systemctl start skilld.socket
is_inactive || fail "skilld runs before anyone connected"
[[ -S /run/skilld/bus ]] || fail "no socket /run/skilld/bus"

hello=$(make_skill hello 'echo "hello $1 from $(id -u)"')
socket=unix:path=/run/skilld/bus
mapfile -t lines < <(as_user alice "$SKILLD_CALL" --address "$socket" run --stdout --wait "$hello" socket)
[[ ${lines[1]:-} == "hello socket from "* ]] || fail "unexpected output through the socket: ${lines[*]}"
assert_eq "succeeded 0" "${lines[2]:-}" "status through the socket"
assert_eq active "$(systemctl is-active skilld.service)" "skilld after a connection to the socket"
echo "alice ran a skill through /run/skilld/bus: ${lines[1]}"

# polkit applies here too: nobody has no grant for io.skilld.run-unlisted.
if err=$(as_user nobody "$SKILLD_CALL" --address "$socket" run "$hello" 2>&1); then
    fail "nobody could run a skill through the socket: $err"
fi
assert_contains "$err" "org.freedesktop.DBus.Error" "the error for nobody"
assert_contains "$err" "io.skilld.run-unlisted" "the error for nobody"
echo "nobody refused: $err"

# The run is the caller's, seen the same through the socket and the bus.
id=${lines[0]}
assert_eq 's "finished"' "$(run_prop "$id" State alice)" "the run's state on the bus"
assert_eq "u 1001" "$(run_prop "$id" Owner alice)" "the run's owner"
