#!/bin/bash
# Runs with network, through skillctl and the service: the policy lists the skill fetcher for
# network, and a web server listens on 127.0.0.1 in the VM. alice, who lacks io.skilld.network,
# is refused and nothing runs; carol (an admin) and root reach the server; a skill the policy
# does not list is refused with the policy's error even for root, whom polkit never stops.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s\nnetwork:\n  allowed-skills: [fetcher]'

work=$PWD
port=18573
server_pid=
cleanup() {
    [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
    for s in fetcher nofetch; do
        busctl --system call "${MANAGER[@]}" RemoveSkill s "$s" >/dev/null 2>&1 || true
    done
}
trap cleanup EXIT

# The server, in the VM's (the host's) network namespace, which the service now shares.
mkdir -p "$work/www"
marker=skilld-network-$RANDOM$RANDOM
echo "$marker" >"$work/www/hello.txt"
python3 -m http.server --bind 127.0.0.1 --directory "$work/www" "$port" >/dev/null 2>"$work/server.log" &
server_pid=$!
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
wait_until 10 listening || fail "the test web server does not listen on 127.0.0.1:$port"
requests() { grep -c 'GET /hello.txt' "$work/server.log" || true; }

# bash's /dev/tcp: no HTTP client needed in the sandbox.
body='exec 3<>"/dev/tcp/127.0.0.1/$1"
printf "GET /hello.txt HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
cat <&3'
# Made aside: where skillctl runs, "fetcher" must name the installed skill, not a folder.
mkdir -p "$work/src"
cd "$work/src"
fetcher=$(make_skill fetcher "$body")
nofetch=$(make_skill nofetch "$body")
cd "$work"
"$SKILLD_CALL" install "$fetcher" >/dev/null
"$SKILLD_CALL" install "$nofetch" >/dev/null

for u in alice carol root; do
    install -d -o "$u" -m 0755 "$work/$u"
done
# run USER ARGS...: skillctl run --system --network ARGS as USER; stdout, stderr, status kept.
run() {
    local u=$1
    shift
    rc=0
    (cd "$work/$u" && as_user "$u" skillctl --no-ask-password run --system --network "$@") \
        >"$work/out" 2>"$work/err" || rc=$?
    echo "$u: exit $rc; stdout: $(head -c 1000 "$work/out"); stderr: $(head -c 1000 "$work/err")"
}

# alice's runs in the store, as ListRuns counts them ("a(sossussitt) N ...").
alice_runs() { as_user alice busctl --system call "${MANAGER[@]}" ListRuns | cut -d' ' -f2; }

# 1. alice may run skills, but not with network: refused before anything runs.
before=$(requests)
runs_before=$(alice_runs)
run alice fetcher "$port"
[[ $rc != 0 ]] || fail "alice ran a skill with network without io.skilld.network"
grep -Eq "not authorized|authentication is required" "$work/err" ||
    fail "alice's refusal is not an authorization error: $(cat "$work/err")"
assert_eq "$before" "$(requests)" "requests to the server after alice's refused run"
assert_eq "$runs_before" "$(alice_runs)" "alice's runs in the store after her refused run"

# 2. carol, an admin, holds io.skilld.network: her run reaches the server.
run carol fetcher "$port"
assert_eq 0 "$rc" "carol's run with network"
assert_contains "$(cat "$work/out")" "$marker" "carol's run's output"
assert_contains "$(cat "$work/err")" "skillctl: succeeded, exit 0" "carol's summary"
id=$(basename "$(find "$work/carol/skill-out" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
assert_eq true "$(python3 -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["network"]).lower())' \
    "$work/carol/skill-out/$id/result.json")" "the result's network"
assert_eq b\ true "$(run_prop "$id" Network)" "the run's Network property"

# 3. root skips polkit.
run root fetcher "$port"
assert_eq 0 "$rc" "root's run with network"
assert_contains "$(cat "$work/out")" "$marker" "root's run's output"

# 4. The policy does not list nofetch: refused with its error, even for root.
before=$(requests)
run root nofetch "$port"
[[ $rc != 0 ]] || fail "nofetch ran with network, which the policy does not allow it"
assert_contains "$(cat "$work/err")" "the policy does not allow this skill network" "nofetch's refusal"
assert_eq "$before" "$(requests)" "requests to the server after nofetch's refused run"

# 5. Without --network the same skill stays in its own namespace: the connection fails.
rc=0
(cd "$work/root" && skillctl run --system fetcher "$port") >"$work/out" 2>"$work/err" || rc=$?
[[ $rc != 0 ]] || fail "fetcher reached the server without network: $(cat "$work/out")"
assert_eq "$before" "$(requests)" "requests to the server after a run without network"
echo "without network: exit $rc"
