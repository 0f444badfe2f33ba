# shellcheck shell=bash
# The service on the host, for the benchmarks that run skilld natively (list-bench.sh,
# throughput.sh): a private dbus-daemon that every user may reach, a policy that keeps every run,
# and skilld as root with --bus-address, --state-dir and --runtime-dir of its own, so that nothing
# outside the benchmark's temporary directory is touched. No systemd: runs use the sandbox
# engine's own cgroup limits. Sourced; the caller sets T (its temporary directory, mode 755), B
# (the build directory), SKILLCTL, STATE (the store) and die(), and on exit calls
# host_service_cleanup (with its own pids, if any, killed first).

# shellcheck disable=SC2034 # the caller's cleanup kills bus_pid
bus_pid='' skilld_pid=''

# Writes the bus's configuration and the policy, starts the bus, exports DBUS_SYSTEM_BUS_ADDRESS.
host_service_setup() {
    cat >"$T/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$T/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
XML
    cat >"$T/policy.yaml" <<'YAML'
retention:
  max-runs: infinity
  max-bytes: infinity
  max-age: infinity
  per-user:
    max-runs: infinity
    max-bytes: infinity
service:
  idle-timeout: 600s
YAML
    dbus-daemon --config-file="$T/bus.conf" --nofork --nopidfile 2>/dev/null &
    # shellcheck disable=SC2034 # killed by the caller's cleanup
    bus_pid=$!
    for _ in $(seq 100); do [[ -S $T/bus ]] && break; sleep 0.1; done
    export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$T/bus"
}

# Starts skilld over $STATE and waits until skillctl list answers.
start_skilld() {
    "$B/skilld/skilld" --bus-address="$DBUS_SYSTEM_BUS_ADDRESS" --state-dir="$STATE" \
        --runtime-dir="$T/run" --policy="$T/policy.yaml" --no-idle-exit 2>"$T/skilld.log" &
    skilld_pid=$!
    until (cd / && "$SKILLCTL" list --quiet -n 1 >/dev/null 2>&1); do
        kill -0 "$skilld_pid" 2>/dev/null || die "skilld died: $(tail -n 5 "$T/skilld.log")"
        sleep 0.2
    done
}
stop_skilld() { kill "$skilld_pid"; wait "$skilld_pid" || true; skilld_pid=; }

# Stops skilld and the bus if they run, and removes $T.
host_service_cleanup() {
    [[ -z $skilld_pid ]] || { kill "$skilld_pid" 2>/dev/null; wait "$skilld_pid" 2>/dev/null || true; }
    [[ -z $bus_pid ]] || kill "$bus_pid" 2>/dev/null || true
    rm -rf "$T"
}

# The trivial skill of run-bench.sh, in the folder DIR (named trivial): one JSON line.
make_trivial_skill() {
    mkdir -p "$1/scripts"
    printf -- '---\nname: trivial\ndescription: Prints one JSON line; the smallest possible skill.\n---\n' \
        >"$1/SKILL.md"
    printf '#!/bin/bash\necho "{\\"ok\\": true}"\n' >"$1/scripts/main.sh"
    chmod -R a+rX "$1"
}
