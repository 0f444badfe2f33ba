#!/bin/bash
# skilld.socket: the same API on the private socket /run/skilld/bus, a direct connection with no
# bus daemon in between. A connection starts the service (socket activation); calls are
# authorized with polkit as on the bus, the caller being a unix-process subject.
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
mapfile -t out < <(as_user alice "$SKILLD_CALL" --address unix:path=/run/skilld/bus run --stdout --wait "$hello" socket)
[[ ${out[1]:-} == "hello socket from "* ]] || fail "unexpected output through the socket: ${out[*]}"
assert_eq "succeeded 0" "${out[2]:-}" "status through the socket"
assert_eq active "$(systemctl is-active skilld.service)" "skilld after a connection to the socket"
echo "alice ran a skill through /run/skilld/bus: ${out[1]}"

# polkit applies here too: nobody has no grant for io.skilld.run-unlisted.
if err=$(as_user nobody "$SKILLD_CALL" --address unix:path=/run/skilld/bus run "$hello" 2>&1); then
    fail "nobody could run a skill through the socket: $err"
fi
assert_contains "$err" "org.freedesktop.DBus.Error" "the error for nobody"
assert_contains "$err" "io.skilld.run-unlisted" "the error for nobody"
echo "nobody refused: $err"

# The run is the caller's, seen the same through the socket and the bus.
id=${out[0]}
assert_eq 's "finished"' "$(run_prop "$id" State alice)" "the run's state on the bus"
assert_eq "u 1001" "$(run_prop "$id" Owner alice)" "the run's owner"
