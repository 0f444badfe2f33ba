#!/bin/bash
# Environments through the real skilld service, on a private bus configured as a system bus: a
# run of a skill whose environment is not built is refused before it is queued with
# io.skilld.Skilld1.Error.EnvironmentMissing (skillctl exits 122, naming the package); a user who
# is not authorized (no polkit answers on this bus: only root is) cannot build it; root builds it
# through BuildEnvironment (skillctl env build --system), with the log streamed live; two
# concurrent builds build once; the service's run mounts it and stays offline.
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
export T
export -f rc_is err_has out_has
# pip's own configuration reaches embedded builds (this machine sets PIP_FIND_LINKS): none here.
unset PIP_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
export PIP_CONFIG_FILE=/dev/null

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

# A user the service does not authorize: refused before anything is built.
chmod 0755 "$T"
chmod -R a+rX "$S"
setpriv --reuid=65534 --regid=65534 --clear-groups "$SKILLCTL" --no-ask-password env build --system \
        --resolvers pip --index-url "http://127.0.0.1:$PORT/simple/" "$S" >"$T/out" 2>"$T/err"
echo $? >"$T/rc"
check "an unauthorized user's BuildEnvironment is refused" bash -c "! rc_is 0 && err_has 'not authorized' && \
        ! ls '$T/envs' 2>/dev/null | grep -q '^[0-9a-f]\{64\}$'"

sk env build --system --resolvers bogus "$S"
check "an unknown resolver is a usage error" rc_is 2

# The service checks the options itself, before it unpacks anything (python3-jeepney passes the
# archive's fd; busctl cannot). bc OPTIONS-AS-PYTHON: the D-Bus error name and message, if any.
"$SKILLCTL" skill package "$S" -o "$T/pip-greet.skill" >/dev/null 2>&1
bc() {
        $PYTHON - "$T/pip-greet.skill" "$1" >"$T/out" 2>"$T/err" <<'PY'
import sys
from jeepney import DBusAddress, new_method_call, DBusErrorResponse
from jeepney.io.blocking import open_dbus_connection
addr = DBusAddress("/io/skilld/Skilld1", bus_name="io.skilld.Skilld1", interface="io.skilld.Skilld1.Manager")
with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn, open(sys.argv[1], "rb") as f:
    msg = new_method_call(addr, "BuildEnvironment", "ha{sv}", (f, eval(sys.argv[2])))
    reply = conn.send_and_get_reply(msg, timeout=60)
    print(reply.header.fields, reply.body)
PY
        echo $? >"$T/rc"
}
if $PYTHON -c 'import jeepney' 2>/dev/null; then
        bc '{"colour": ("s", "red")}'
        check "an unknown option is InvalidArgs, named" bash -c "grep -q InvalidArgs '$T/out' && out_has \"Unknown option 'colour'\""
        bc '{"resolvers": ("as", ["conda"])}'
        check "an unknown resolver is InvalidArgs, named" bash -c "grep -q InvalidArgs '$T/out' && out_has \"Unknown resolver 'conda'\""
        bc '{"index-url": ("s", "ftp://example.invalid/")}'
        check "an index URL of another scheme is InvalidArgs" bash -c "grep -q InvalidArgs '$T/out' && out_has 'index-url must be'"
        bc '{"log": ("h", 0)}'
        check "a log fd not open for writing is InvalidArgs" bash -c "grep -q InvalidArgs '$T/out' && out_has 'log file descriptor'"
fi

# Root through the service: the build log streams into our stderr.
sk env build --system --resolvers pip --index-url "http://127.0.0.1:$PORT/simple/" "$S"
check "root builds the service's environment through BuildEnvironment" \
        bash -c "rc_is 0 && ls '$T/envs' | grep -q '^[0-9a-f]\{64\}$' && grep -q '^Environment [0-9a-f]\{64\} built' '$T/out'"
check "the build's log streamed to the caller" bash -c "grep -qi 'skilld.shout' '$T/err'"
check "the service built it, not skillctl directly" bash -c "! err_has 'building into the service'"
ID=$(sed -n 's/^Environment \([0-9a-f]\{64\}\).*/\1/p' "$T/out")
sk env build --system --json --resolvers pip --index-url "http://127.0.0.1:$PORT/simple/" "$S"
check "building again is a cache hit" \
        bash -c "rc_is 0 && /usr/bin/python3 -c 'import json,sys; j=json.load(open(\"$T/out\")); sys.exit(not (j[\"cached\"] and j[\"id\"] == \"$ID\" and j[\"missing\"] == []))'"

sk env build --system --resolvers pip "$S"
check "a build no source can serve fails with EnvironmentBuildFailed, naming the package" \
        bash -c "rc_is 1 && err_has 'building the environment failed' && err_has 'skilld-shout'"

# Two builds of one id at once build once.
"$SKILLCTL" env rm --system "$ID" >/dev/null 2>&1
for i in 1 2; do
        "$SKILLCTL" env build --system --resolvers pip --index-url "http://127.0.0.1:$PORT/simple/" "$S" \
                >"$T/par$i.out" 2>"$T/par$i.err" &
        par[i]=$!
done
wait "${par[1]}"; r1=$?; wait "${par[2]}"; r2=$?
check "two concurrent builds both succeed" bash -c "[ $r1 = 0 ] && [ $r2 = 0 ]"
check "and build once" bash -c "[ \"\$(cat '$T'/par1.out '$T'/par2.out | grep -c ' built in ')\" = 1 ] && \
        [ \"\$(cat '$T'/par1.out '$T'/par2.out | grep -c 'is built already')\" = 1 ]"
sk run --system -q --env INDEX_PORT="$PORT" "$S" -- service
check "the service's run mounts it" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'HELLO, SERVICE!' '$T/out' && grep -q 'module: /env/python/skilld_shout' '$T/out'"
check "and has no network" grep -q "network: unreachable" "$T/out"
sk env list --system --json
check "env list --system lists it" bash -c "[ \"\$($PYTHON -c 'import json; print(len(json.load(open(\"$T/out\"))))')\" = 1 ]"

finish
