#!/bin/bash
# skillctl -H over real SSH, as systemctl -H: alice, with a key authorized for herself, reaches
# the system bus of localhost through ssh and systemd-stdio-bridge. No fd passes over that
# transport, so installed skills run by name with their output read back in chunks (ReadLog), live
# while the run goes; logs and artifacts come the same way (ReadArtifact); an ad-hoc run, which
# needs an fd, is refused with a clear message; polkit decides as for a local caller, and the run
# is alice's. Skills are installed by root from examples/skills (and one made here).
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
# The waiter below runs until canceled: a default timeout far beyond what a slow host needs.
daemon_policy $'service:\n  idle-timeout: 60s\nlimits:\n  timeout:\n    default: 10m'
examples=$SKILLD_SOURCE_ROOT/examples/skills
work=$PWD
alice_uid=$(id -u alice)

# sshd comes up with the boot (openssh-server in the base, host keys made there).
wait_until 60 systemctl -q is-active ssh.service ||
    fail "sshd is not running: $(systemctl status ssh.service 2>&1 | tail -n 5)"

# alice's key, authorized for herself; the host key checked against what ssh-keyscan saw, so
# StrictHostKeyChecking stays on.
as_user alice bash -c 'set -e
    install -d -m 0700 ~/.ssh
    rm -f ~/.ssh/id_ed25519 ~/.ssh/id_ed25519.pub
    ssh-keygen -q -t ed25519 -N "" -f ~/.ssh/id_ed25519
    cp ~/.ssh/id_ed25519.pub ~/.ssh/authorized_keys
    chmod 0600 ~/.ssh/authorized_keys
    ssh-keyscan -t ed25519 localhost 2>/dev/null >~/.ssh/known_hosts
    [ -s ~/.ssh/known_hosts ]' || fail "setting up alice's ssh key failed"
assert_eq "ok" "$(as_user alice ssh -o BatchMode=yes alice@localhost echo ok)" "alice's ssh to herself"

# Installed by root, as an admin would; one more that prints, then waits to be canceled.
waiter=$(make_skill waiter 'echo "one"; echo "to stderr" >&2; exec sleep 120')
for s in "$examples/shell-report" "$examples/make-artifacts" "$waiter"; do
    skillctl skill install --replace "$s" >/dev/null || fail "root could not install $s"
done

install -d -o alice -m 0755 "$work/alice"
# remote ARGS...: skillctl -H alice@localhost ARGS as alice, in her directory; stdout, stderr and
# status kept.
remote() {
    rc=0
    (cd "$work/alice" && as_user alice skillctl -H alice@localhost "$@") >"$work/out" 2>"$work/err" ||
        rc=$?
}
json() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' \
        "$work/out" "$1"
}
show() {
    echo "exit $rc"
    echo "stdout: $(head -c 2000 "$work/out")"
    echo "stderr: $(head -c 2000 "$work/err")"
}
# The run id of the summary line ("... in run ID").
summary_id() { grep -oE 'in run [0-9a-f]{32}' "$work/err" | tail -n 1 | cut -d' ' -f3; }
# record_owner ID: the owner the store recorded for a run.
record_owner() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["owner"])' \
        "$SKILLD_STATE/runs/$1/request.json"
}

# 1. The installed skills, over SSH.
remote skill list
show
assert_eq 0 "$rc" "skillctl -H skill list"
for s in shell-report make-artifacts waiter; do
    grep -q "^$s " "$work/out" || fail "skill list over SSH lacks $s"
done

# 2. An installed skill runs; its output is shown though no pipe could carry it.
remote run shell-report --input '{"name": "remote-alice"}'
show
assert_eq 0 "$rc" "skillctl -H run shell-report"
assert_contains "$(cat "$work/out")" '"name": "remote-alice"' "the run's stdout, read with ReadLog"
assert_contains "$(cat "$work/err")" "skillctl: succeeded, exit 0" "the summary line"
id=$(summary_id)
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "no run id in the summary"
[[ -f $SKILLD_STATE/runs/$id/result.json ]] || fail "no record of run $id in $SKILLD_STATE/runs"
assert_eq "$alice_uid" "$(record_owner "$id")" "the owner of the run made over SSH"
[[ ! -e $work/alice/skill-out ]] || fail "over SSH, nothing should be fetched without --output-dir"

remote list --json
assert_eq 0 "$rc" "skillctl -H list"
grep -q "\"$id\"" "$work/out" || fail "run $id is not in alice's list over SSH: $(cat "$work/out")"
remote status "$id"
assert_contains "$(cat "$work/out")" "State: finished (succeeded, exit 0)" "skillctl -H status"
remote result --json "$id"
assert_eq 0 "$rc" "skillctl -H result"
assert_eq remote-alice "$(json '["output"]["name"]')" "the result's output over SSH"
remote logs "$id"
assert_eq 0 "$rc" "skillctl -H logs"
assert_eq "$(cat "$SKILLD_STATE/runs/$id/stdout.log")" "$(cat "$work/out")" \
    "logs over SSH against the stored log"
echo "run $id over SSH: output, list, status, result and logs"

# 3. Output while the run goes: the waiter never ends by itself, so "one" can only come from
# ReadLog polled during the run; logs -f follows it too, until the run is canceled.
(cd "$work/alice" && as_user alice skillctl -H alice@localhost run waiter) \
    >"$work/waiter.out" 2>"$work/waiter.err" &
runner=$!
# Its id from the local bus: each poll over SSH would cost a login.
wid=
for _ in $(seq 150); do
    # shellcheck disable=SC2015 # any failure just means "not yet"
    wid=$(as_user alice skillctl list --json 2>/dev/null | python3 -c '
import json, sys
runs = json.load(sys.stdin)
print(next((r["id"] for r in runs if r["skill"] == "waiter" and r["state"] == "running"), ""))' || true)
    [[ -n $wid ]] && break
    sleep 0.2
done
[[ -n $wid ]] || fail "the waiter never showed as running: $(cat "$work/waiter.err")"
wait_until 60 grep -qx one "$work/waiter.out" || fail "no live output over SSH: $(cat "$work/waiter.err")"
(cd "$work/alice" && as_user alice timeout 120 skillctl -H alice@localhost logs -f "$wid") \
    >"$work/follow.out" 2>"$work/follow.err" &
follower=$!
wait_until 60 grep -qx one "$work/follow.out" ||
    fail "logs -f over SSH showed nothing: $(cat "$work/follow.err")"
remote cancel "$wid"
show
assert_eq 0 "$rc" "skillctl -H cancel"
rrc=0
wait "$runner" || rrc=$?
cat "$work/waiter.err"
assert_eq 130 "$rrc" "exit status of the canceled run over SSH"
grep -qx "to stderr" "$work/waiter.err" || fail "the run's stderr was not shown"
frc=0
wait "$follower" || frc=$?
assert_eq 0 "$frc" "logs -f over SSH ends with the run"
assert_eq one "$(cat "$work/follow.out")" "what logs -f showed"
echo "waiter $wid: live output and logs -f over SSH, canceled"

# 4. Artifacts: listed, fetched by path, the bytes those in the store.
remote run make-artifacts --input '{"rows": [{"item": "pears", "qty": 7}], "title": "Remote"}'
show
assert_eq 0 "$rc" "skillctl -H run make-artifacts"
aid=$(summary_id)
[[ $aid =~ ^[0-9a-f]{32}$ ]] || fail "no run id in the summary of make-artifacts"
remote artifacts "$aid"
assert_contains "$(cat "$work/out")" "report/summary.md" "skillctl -H artifacts lists"
remote artifacts "$aid" --get table.csv --get report/summary.md -o fetched
show
assert_eq 0 "$rc" "skillctl -H artifacts --get"
for f in table.csv report/summary.md; do
    cmp "$SKILLD_STATE/runs/$aid/artifacts/$f" "$work/alice/fetched/$f" ||
        fail "$f fetched over SSH differs from the stored artifact"
done
assert_eq alice "$(stat -c %U "$work/alice/fetched/table.csv")" "owner of the fetched artifact"
grep -q '^pears,7' "$work/alice/fetched/table.csv" || fail "table.csv lacks the row"
remote artifacts "$aid" --get table.csv -o -
cmp "$SKILLD_STATE/runs/$aid/artifacts/table.csv" "$work/out" || fail "artifacts --get -o - over SSH differs"
echo "artifacts of $aid fetched over SSH, bytes as stored"

# 5. polkit decides as for a local caller: alice may not see everyone's runs or remove skills.
# Both are auth_admin_keep: polkit would ask for a password, which no agent can do over SSH.
remote list --all
show
assert_eq 1 "$rc" "skillctl -H list --all as alice"
assert_contains "$(cat "$work/err")" \
    "list --all: authentication is required, and skillctl cannot ask for it over SSH" "the denial"
remote skill remove shell-report
show
assert_eq 1 "$rc" "skillctl -H skill remove as alice"
assert_contains "$(cat "$work/err")" "authentication is required" "the denial"
skillctl skill list | grep -q '^shell-report ' || fail "alice removed a skill over SSH"

# 6. An ad-hoc run needs its skill passed as an fd: refused before anything is sent.
runs_before=$(find "$SKILLD_STATE/runs" -mindepth 1 -maxdepth 1 | wc -l)
remote run "$examples/shell-report"
show
assert_eq 125 "$rc" "skillctl -H run DIR"
assert_contains "$(cat "$work/err")" \
    "cannot pass file descriptors over SSH: only installed skills run there" "the refusal"
assert_eq "$runs_before" "$(find "$SKILLD_STATE/runs" -mindepth 1 -maxdepth 1 | wc -l)" \
    "runs after the refusal"

for s in shell-report make-artifacts waiter; do
    skillctl skill remove "$s" >/dev/null
done
echo "skillctl -H over SSH works as alice"
