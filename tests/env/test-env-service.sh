#!/bin/bash
# Environments through the real skilld service, on a private bus configured as a system bus: a
# run of a skill whose environment is not built is refused before it is queued with
# io.skilld.Skilld1.Error.EnvironmentMissing (skillctl exits 122, naming the package); after root
# builds it with skillctl env build --system, the service's run mounts it and stays offline.
# The service's cache is a scratch folder ($SKILLD_ENV_CACHE_DIR). Uses the local pip index of
# tests/env/fixtures/pip, so it needs no network. Needs root; exit 77 otherwise. Prints TAP lines.
set -u

SKILLCTL=${SKILLCTL:?}
SKILLD=${SKILLD:?}
SRC=${SKILLD_SOURCE_ROOT:?}/tests/env
PYTHON=/usr/bin/python3

if [ "$(id -u)" != 0 ]; then
        echo "# SKIP the service and builds for it need root"
        exit 77
fi
if ! command -v dbus-daemon >/dev/null || ! $PYTHON -c 'import setuptools, wheel, pip' 2>/dev/null; then
        echo "# SKIP needs dbus-daemon, python3-pip, python3-setuptools and python3-wheel"
        exit 77
fi

T=$(mktemp -d)
. "$SRC/lib.sh"
trap cleanup EXIT
cd "$T" || exit 1
export SKILLD_ENV_CACHE_DIR=$T/envs
unset PIP_INDEX_URL

wait_for() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }

# ---- the index ---------------------------------------------------------------------------------
start_pip_index

# ---- a private system bus and the service ----------------------------------------------------------
cat >"$T/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:tmpdir=$T</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$T/bus.conf" --nofork --nopidfile --print-address=3 3>"$T/address" 2>/dev/null &
pids+=($!)
wait_for "$T/address" || { echo "Bail out! dbus-daemon did not start"; exit 1; }
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address")
export DBUS_SYSTEM_BUS_ADDRESS
export SKILLD_BUS_ADDRESS=unix:path=$T/no-such-socket
mkdir -p "$T/state" "$T/run"
# Not our address for skilld itself: where systemd runs (the VM), it asks the real system bus for
# its runs' scopes, as test-daemon's instance does.
env -u DBUS_SYSTEM_BUS_ADDRESS "$SKILLD" --bus-address="$DBUS_SYSTEM_BUS_ADDRESS" --state-dir="$T/state" \
        --runtime-dir="$T/run" --no-idle-exit 2>"$T/skilld.log" &
pids+=($!)
for _ in $(seq 100); do
        "$SKILLCTL" list >/dev/null 2>&1 && break
        sleep 0.1
done

S=$T/pip-greet
cp -r "$SRC/fixtures/skills/pip-greet" "$S"

sk run --system "$S" -- service
check "unbuilt: the service refuses the run, skillctl exits 122" bash -c "[ \"\$(cat '$T/rc')\" = 122 ]"
check "naming the package and the build command" \
        bash -c "grep -q 'skilld-shout' '$T/err' && grep -q 'skillctl env build --system' '$T/err'"
sk list --json
check "nothing was queued" bash -c "[ \"\$($PYTHON -c 'import json; print(len(json.load(open(\"$T/out\"))))')\" = 0 ]"

sk env build --system --resolvers pip --index-url "http://127.0.0.1:$PORT/simple/" "$S"
check "root builds the service's environment" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && ls '$T/envs' | grep -q '^[0-9a-f]\{64\}$'"
sk run --system -q --env INDEX_PORT="$PORT" "$S" -- service
check "the service's run mounts it" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'HELLO, SERVICE!' '$T/out' && grep -q 'module: /env/python/skilld_shout' '$T/out'"
check "and has no network" grep -q "network: unreachable" "$T/out"
sk env list --system --json
check "env list --system lists it" bash -c "[ \"\$($PYTHON -c 'import json; print(len(json.load(open(\"$T/out\"))))')\" = 1 ]"

finish
