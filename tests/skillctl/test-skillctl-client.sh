#!/bin/bash
# skillctl as the client of io.skilld.Skilld1, against fake-skilld (tests/skillctl/fake-skilld.c) on
# a private dbus-daemon configured as a system bus, then on a private socket like /run/skilld/bus.
# Proves: runs go through the service when it answers (the skill as a sealed memfd or the .skill
# file's fd, inputs as fds, output through pipes), and embedded only when nothing answers;
# --system refuses that; every verb's happy path, JSON output, and the named errors as messages
# and exit statuses; without fd passing (as over SSH), ad-hoc runs refused and output, logs and
# artifacts read in chunks. The real daemon is tested in the VM (tests/vm/tests.d/60-skillctl-client.sh).
# Prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
FAKE_SKILLD=${FAKE_SKILLD:?}
SRC=${SKILLD_SOURCE_ROOT:?}
EXAMPLES=$SRC/examples/skills

if ! command -v dbus-daemon >/dev/null; then
        echo "1..0 # SKIP dbus-daemon is not installed"
        exit 0
fi

T=$(mktemp -d)
bus_pid=
fake_pids=()
cleanup() {
        for p in "${fake_pids[@]}" $bus_pid; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1

. "$(dirname "$0")/../lib/tap.sh"

# Runs skillctl, keeping stdout, stderr and the exit status.
sc() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$T/out" "$1"; }
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out"; }
has() { grep -q -- "$1" "$T/$2"; }
not() { ! "$@"; }
reported() { grep -q -- "$1" "$T/report"; }
wait_for_file() { for _ in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }

# A bus like the system bus (the client asks for the system bus and gets this one), allowing all.
cat >"$T/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:tmpdir=$T</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$T/bus.conf" --nofork --nopidfile --print-address=3 3>"$T/address" 2>/dev/null &
bus_pid=$!
wait_for_file "$T/address" && for _ in $(seq 100); do [ -s "$T/address" ] && break; sleep 0.1; done
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address")
export DBUS_SYSTEM_BUS_ADDRESS
# Never the host's /run/skilld/bus: a socket that does not exist, until the socket tests.
export SKILLD_BUS_ADDRESS=unix:path=$T/no-such-socket
# No skill folders of the user running the tests: only the fake service's skills.
export SKILLCTL_SKILLS_PATH=

echo hello >"$T/in.txt"

# --- Nothing answers: embedded, unless --system. ---------------------------------------------
sc run --system "$EXAMPLES/shell-report"
check "--system without a service exits 125" test "$(rc)" = 125
check "--system says why" has "no skilld service answered, and --system forbids running embedded" err
sc run "$EXAMPLES/shell-report"
# No skilld installed here (no activation file): the fallback is the normal case, said nothing of.
check "no service installed: falls back silently" not has "running embedded" err
# Whether the embedded run succeeds is the sandbox suite's business (test-skillctl-run.sh).
sc run shell-report
check "no service: an installed skill cannot run" test "$(rc)" = 125
sc list
check "no service: list exits 1" test "$(rc)" = 1
check "no service: list says so" has "no skilld service answered" err

# --- The fake service on the bus. --------------------------------------------------------------
"$FAKE_SKILLD" --report "$T/report" --ready "$T/ready" 2>"$T/fake.err" &
fake_pids+=($!)
wait_for_file "$T/ready" || { echo "Bail out! fake-skilld did not start: $(cat "$T/fake.err")"; exit 1; }

sc run "$EXAMPLES/shell-report"
check "run through the service exits 0" test "$(rc)" = 0
check "the skill went as a sealed memfd holding a zip" reported "skill=shell-report memfd sealed=yes zip=ok"
check "output came through pipes we passed" reported "stdout=fifo sealed=no stderr=fifo"
check "live stdout reached our stdout" has "fake output of shell-report" out
check "live stderr reached our stderr" has "fake diagnostics" err
check "the summary line is the embedded one" has "^skillctl: succeeded, exit 0, 0.42s, peak memory 3.0M, 0 artifacts in skill-out/" err
check "no fallback message" not has "running embedded" err
id=$(sed -n 's/^run \([0-9a-f]*\) skill=shell-report memfd.*/\1/p' "$T/report" | tail -n 1)
check "artifacts, logs and result.json fetched into ./skill-out/ID" test -s "$T/skill-out/$id/result.json" -a \
        -s "$T/skill-out/$id/stdout.log"

"$SKILLCTL" skill package "$EXAMPLES/shell-report" -o "$T/shell-report.skill" >/dev/null
sc run "$T/shell-report.skill"
check "a .skill file went as its own fd" reported "skill=shell-report file sealed=no zip=ok"

sc run "$EXAMPLES/shell-report" --memory 100M --timeout 30 --env FOO=bar --file in.txt="$T/in.txt" \
        --input '{"x": 1}' -- a b
check "options: exit 0" test "$(rc)" = 0
check "options: only the limits asked for, in bytes and microseconds" \
        reported "limits.memory=104857600 limits.timeout=30000000 env.FOO=bar"
check "options: --file went as a readable fd, not a path" reported "files.in.txt:file sealed=no:hello"
check "options: args and input" reported "args=a,b input={\"x\": 1}"
check "options: no limit that was not asked for" not reported "limits.tasks"

sc run "$EXAMPLES/shell-report" -- exit=3
check "a failing run exits with its code" test "$(rc)" = 3
check "its summary says failed, exit 3" has "skillctl: failed, exit 3" err

sc run "$EXAMPLES/shell-report" --json
check "--json: exit 0" test "$(rc)" = 0
check "--json: the result JSON" test "$(json_get '["status"]')" = succeeded
check "--json: no output pipes" reported "input=$"

sc run "$EXAMPLES/shell-report" --output-dir "$T/od"
check "--output-dir: result.json" python3 -c "import json; assert json.load(open('$T/od/result.json'))['status'] == 'succeeded'"
check "--output-dir: stdout.log" grep -q "fake output" "$T/od/stdout.log"
check "--output-dir: result.json laid out as embedded (two spaces, final newline)" \
        grep -q '^  "status": "succeeded",$' "$T/od/result.json"
check "--output-dir: result.json ends with a newline" test "$(tail -c 1 "$T/od/result.json" | od -An -c | tr -d ' ')" = '\n'


sc run shell-report
check "an installed skill runs by name" reported "skill=shell-report installed"
sc run no-such-skill
check "unknown installed skill: 125" test "$(rc)" = 125
check "unknown installed skill: message" has "skillctl: no-such-skill: no such skill is installed" err

sc run "$EXAMPLES/shell-report" --network
check "authorization failure: 125" test "$(rc)" = 125
check "authorization failure: says so" has "not authorized: Not authorized to run skills with network" err

lines=$(wc -l <"$T/report")
sc run --local "$EXAMPLES/shell-report"
check "--local never asks the service" test "$(wc -l <"$T/report")" = "$lines"
sc run --system "$EXAMPLES/shell-report"
check "--system with a service: exit 0" test "$(rc)" = 0

# Interrupted: the run is canceled and reported as such.
"$SKILLCTL" run "$EXAMPLES/shell-report" -- sleep >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 100); do grep -q "args=sleep" "$T/report" && break; sleep 0.1; done
sleep 0.2
kill -INT $pid
wait $pid
echo $? >"$T/rc"
check "SIGINT cancels the run: exit 130" test "$(rc)" = 130
check "SIGINT: the service was asked to cancel" reported "^cancel "
check "SIGINT: the summary says canceled" has "skillctl: canceled" err

# --- list, status ------------------------------------------------------------------------------
sc list
check "list: exit 0" test "$(rc)" = 0
check "list: own runs" has "^aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa shell-report" out
check "list: not someone else's" not has "cccccccccccccccccccccccccccccccc" out
sc list --quiet
check "list --quiet: the runs' ids" has "^aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa$" out
check "list --quiet: ids only, one a line" not grep -qv '^[0-9a-f]\{32\}$' "$T/out"
# The completions ask exactly this for run ids: bash and fish, against the (fake) service.
comp_words() {
        bash -c 'source "$1"; COMP_WORDS=(skillctl status ""); COMP_CWORD=2; _skillctl skillctl "" status
                 printf "%s\n" "${COMPREPLY[@]}"' bash "$SKILLD_SOURCE_ROOT/completions/skillctl.bash" >"$T/out"
}
PATH="$(dirname "$SKILLCTL"):$PATH" comp_words
check "bash completes run ids from the service" has "^aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa$" out
if command -v fish >/dev/null; then
        PATH="$(dirname "$SKILLCTL"):$PATH" fish --no-config -c \
                "source '$SKILLD_SOURCE_ROOT/completions/skillctl.fish'; complete -C'skillctl logs '" >"$T/out"
        check "fish completes run ids from the service" has "^aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" out
fi
sc list --json
check "list --json parses" json_ok
check "list --json: state of the first" test "$(json_get '[0]["state"]')" = finished
sc list --all
check "list --all denied: exit 1" test "$(rc)" = 1
check "list --all denied: says not authorized" has "skillctl: list --all: not authorized: " err
# The fake is a service older than ListRunsFiltered: skillctl lists through ListRuns and keeps
# the newest itself (the real service's pages: tests/daemon, tests/vm/tests.d/53-daemon-ownership.sh).
sc list --quiet
cp "$T/out" "$T/every"
total=$(wc -l <"$T/every")
sc list -n 2
check "list -n 2 (an older service): exit 0" test "$(rc)" = 0
check "list -n 2: the newest two, oldest first" test "$(grep -o '^[0-9a-f]\{32\}' "$T/out")" = "$(tail -n 2 "$T/every")"
check "list -n 2: the rest named on stderr" has "^$((total - 2)) older runs not shown; --lines=all lists every run.$" err
sc list --lines=all
check "list --lines=all: every run" test "$(grep -o '^[0-9a-f]\{32\}' "$T/out")" = "$(cat "$T/every")"
check "list --lines=all: nothing left out" not has "not shown" err
sc list --quiet -n 1
check "list --quiet -n 1: the newest id" test "$(cat "$T/out")" = "$(tail -n 1 "$T/every")"
sc list --lines=0
check "list --lines=0: a usage error" test "$(rc)" = 2
check "list --lines=0: says what it takes" has "lines takes a number of runs (1 or more) or 'all'" err

sc status aaaa
check "status by prefix" has "State: finished (succeeded, exit 0)" out
check "status: limits in words, not API keys" has "Limits: memory 512.0M, time 1min 0s$" out
check "status: usage in words, not API keys" has "Usage: wall time 0.42s, peak memory 3.0M$" out
sc status --json aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
check "status --json parses" test "$(json_get '["limits"]["memory"]')" = 536870912
sc status cccccccccccccccccccccccccccccccc
check "someone else's run: exit 4" test "$(rc)" = 4
check "someone else's run: no such run" has "^skillctl: run cccccccccccccccccccccccccccccccc: no such run$" err
sc status 12345678901234567890123456789012
check "unknown run: exit 4" test "$(rc)" = 4
sc status not-an-id
check "not a run id: exit 2" test "$(rc)" = 2

# --- result, logs --------------------------------------------------------------------------------
sc result aaaa
check "result: exit with the run's status" test "$(rc)" = 0
check "result: the summary" has "skillctl: succeeded, exit 0" err
sc result --json aaaa
check "result --json parses" test "$(json_get '["run_id"]')" = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
check "result --json: output numbers as the skill wrote them" \
        python3 -c 'import json,sys; o=json.load(open(sys.argv[1]),parse_float=str)["output"]; assert o=={"big":12345678901234567890,"f":"1.0"}, o' "$T/out"
sc result bbbb
check "result of a running run: 125" test "$(rc)" = 125
check "result of a running run: says why" has "has no result (running)" err

sc logs aaaa
check "logs: stdout to stdout" test "$(cat "$T/out")" = "$(printf 'line one\nline two')"
check "logs: stderr to stderr" test "$(cat "$T/err")" = "a warning"
sc logs --stream stderr aaaa
check "logs --stream stderr: nothing on stdout" test ! -s "$T/out"
timeout 30 "$SKILLCTL" logs -f eeee >"$T/out" 2>"$T/err"; echo $? >"$T/rc"
check "logs -f follows until the run ends" test "$(rc)" = 0 -a "$(grep -c '^tick' "$T/out")" = 5

# --- artifacts -----------------------------------------------------------------------------------
sc artifacts aaaa
check "artifacts: listed" has "data/table.csv" out
sc artifacts --json aaaa
check "artifacts --json parses" test "$(json_get '[0]["path"]')" = report.txt
echo untouched >"$T/victim"
mkdir -p "$T/a1"
ln -s "$T/victim" "$T/a1/report.txt"
sc artifacts aaaa -o "$T/a1"
check "artifacts -o: exit 0" test "$(rc)" = 0
check "artifacts -o: every file, under its path" test "$(cat "$T/a1/data/table.csv")" = "$(printf 'a,b\n1,2')"
check "a symlink in the way is replaced, not written through" test ! -L "$T/a1/report.txt" -a \
        "$(cat "$T/victim")" = untouched -a "$(cat "$T/a1/report.txt")" = "hello report"
mkdir -p "$T/a2" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/a2/data"
sc artifacts aaaa -o "$T/a2"
check "a symlinked directory is not followed: exit 1" test "$(rc)" = 1
check "a symlinked directory is not followed: nothing there" test -z "$(ls "$T/elsewhere")"
check "a symlinked directory is not followed: says so" has "is a symlink, not followed" err
sc artifacts aaaa --get report.txt -o -
check "--get -o -: to stdout" test "$(cat "$T/out")" = "hello report"
sc artifacts aaaa --get nope.txt -o "$T/a3"
check "--get of no such artifact: exit 4" test "$(rc)" = 4
check "--get of no such artifact: message" has "nope.txt: no such artifact" err
sc artifacts dddd -o "$T/a4"
check "hostile artifact paths: exit 1" test "$(rc)" = 1
check "a path climbing out is refused" test ! -e "$T/escape.txt" -a ! -e "$T/a4/../escape.txt"
check "a copy not matching its hash is not written" test ! -e "$T/a4/wrong-hash.txt"

# --- cancel, wait, rm ----------------------------------------------------------------------------
sc rm bbbb
check "rm of a running run: exit 1" test "$(rc)" = 1
check "rm of a running run: says so" has "still queued or running" err
"$SKILLCTL" wait bbbb >"$T/wait.out" 2>"$T/wait.err" &
wait_pid=$!
sleep 0.3
sc cancel bbbb
check "cancel: exit 0" test "$(rc)" = 0
wait $wait_pid
check "wait: returns the canceled run's status" test $? = 130
check "wait: the summary says canceled" grep -q "skillctl: canceled" "$T/wait.err"
sc wait --json bbbb
check "wait --json of an ended run parses" test "$(json_get '["status"]')" = canceled
sc cancel aaaa
check "cancel of an ended run: exit 1" test "$(rc)" = 1
check "cancel of an ended run: says so" has "run aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: the run has already finished" err
sc rm bbbb
check "rm: exit 0" test "$(rc)" = 0
sc status bbbb
check "rm: the run is gone" test "$(rc)" = 4

# --- skill list, install, remove -----------------------------------------------------------------
sc skill list
check "skill list" has "^shell-report vendor" out
sc skill list --json
check "skill list --json parses" test "$(json_get '[0]["origin"]')" = vendor
sc skill list --quiet
check "skill list --quiet: names only" has "^shell-report$" out
check "skill list --quiet: nothing else" not has " " out
sc skill tools --format anthropic
check "skill tools: the installed skills" test "$(json_get '[0]["name"]')" = shell-report
sc skill install "$EXAMPLES/shell-report"
check "install over an existing skill: exit 1" test "$(rc)" = 1
check "install over an existing skill: says --replace" has "installed already (--replace replaces it)" err
sc skill install --replace "$EXAMPLES/shell-report"
check "install --replace: exit 0" test "$(rc)" = 0
check "install: the skill went as a sealed memfd" reported "install name=shell-report memfd sealed=yes zip=ok replace=1"
"$SKILLCTL" skill package "$EXAMPLES/json-transform" -o "$T/json-transform.skill" >/dev/null
sc skill install "$T/json-transform.skill"
check "install of a .skill file" has "Installed json-transform" out
check "install: a .skill file went as its fd" reported "install name=json-transform file sealed=no"
sc skill remove json-transform
check "skill remove: exit 0" test "$(rc)" = 0
sc skill remove json-transform
check "skill remove of no such skill: exit 4" test "$(rc)" = 4

# --- The private socket, as /run/skilld/bus without a system bus. -------------------------------
"$FAKE_SKILLD" --report "$T/report2" --ready "$T/ready2" --socket "$T/private.sock" 2>"$T/fake2.err" &
fake_pids+=($!)
wait_for_file "$T/ready2" || { echo "Bail out! fake-skilld --socket did not start"; exit 1; }
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/private.sock \
        sc run "$EXAMPLES/shell-report"
check "private socket: the run goes there" grep -q "skill=shell-report memfd sealed=yes zip=ok" "$T/report2"
check "private socket: exit 0 and the summary" test "$(rc)" = 0
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/private.sock sc status aaaa
check "private socket: status" has "State: finished" out
# A system bus without the service: an installed skill's Run, sent there without a Ping first,
# hears that nothing provides it and goes on to the private socket, as a Ping would have.
dbus-daemon --config-file="$T/bus.conf" --nofork --nopidfile --print-address=3 3>"$T/address2" 2>/dev/null &
fake_pids+=($!)
wait_for_file "$T/address2" && for _ in $(seq 100); do [ -s "$T/address2" ] && break; sleep 0.1; done
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address2") SKILLD_BUS_ADDRESS=unix:path=$T/private.sock \
        sc run shell-report
check "empty system bus: an installed skill runs on the private socket" test "$(rc)" = 0
check "empty system bus: the Run reached the socket's service" grep -q "skill=shell-report installed" "$T/report2"
# skilld's root socket (/run/skilld/private while it runs; here the fake's socket): root asks it
# first, before any bus, and a missing one sends root on to the bus quietly. Only root does.
if [ "$(id -u)" = 0 ]; then
        before=$(grep -c "skill=shell-report installed" "$T/report2")
        DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address2") SKILLD_ROOT_BUS_ADDRESS=unix:path=$T/private.sock \
                SKILLD_BUS_ADDRESS=unix:path=$T/no-such-socket sc run --system shell-report
        check "root socket: root's run goes there, before the bus" \
                test "$(rc)" = 0 -a "$(grep -c "skill=shell-report installed" "$T/report2")" = $((before + 1))
        SKILLD_ROOT_BUS_ADDRESS=unix:path=$T/no-root-socket sc run --system shell-report
        check "no root socket: the bus, nothing said of it" test "$(rc)" = 0 -a -z "$(grep -i "root-socket" "$T/err")"
        # skillctl mcp keeps its connection: the bus, whose name outlives a service's restart.
        SKILLD_ROOT_BUS_ADDRESS=unix:path=$T/private.sock sc -v mcp </dev/null
        check "mcp, which keeps its connection: the bus, not the root socket" \
                has "Talking to skilld on the system bus" err
fi
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address2") sc run --system shell-report
check "empty system bus, no socket: exit 125" test "$(rc)" = 125
check "empty system bus, no socket: both reasons said" \
        has "nothing on the system bus provides or activates io.skilld.Skilld1, and .*no-such-socket" err
# A bus that activates the service, which fails to start: an error, as after a Ping, whether the
# run's Run asked (an installed skill) or a Ping did (a folder); never a fallback.
mkdir -p "$T/services"
printf '[D-BUS Service]\nName=io.skilld.Skilld1\nExec=/bin/false\n' >"$T/services/io.skilld.Skilld1.service"
sed "s|<auth>EXTERNAL</auth>|<auth>EXTERNAL</auth><servicedir>$T/services</servicedir>|" "$T/bus.conf" >"$T/bus3.conf"
dbus-daemon --config-file="$T/bus3.conf" --nofork --nopidfile --print-address=3 3>"$T/address3" 2>/dev/null &
fake_pids+=($!)
wait_for_file "$T/address3" && for _ in $(seq 100); do [ -s "$T/address3" ] && break; sleep 0.1; done
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address3") sc run shell-report
check "failing activation, installed skill: exit 125" test "$(rc)" = 125
check "failing activation, installed skill: said as after a Ping" \
        has "^skillctl: the skilld service on the system bus does not answer: .*(--local runs without the service)" err
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$T/address3") sc run "$EXAMPLES/shell-report"
check "failing activation, a folder: exit 125, the same words" \
        test "$(rc)" = 125 -a -n "$(grep "^skillctl: the skilld service on the system bus does not answer: " "$T/err")"

# --- No fd passing, as over SSH (skillctl -H): the chunked readers instead. ----------------------
"$FAKE_SKILLD" --report "$T/report3" --ready "$T/ready3" --socket "$T/nofd.sock" --no-fds 2>"$T/fake3.err" &
fake_pids+=($!)
wait_for_file "$T/ready3" || { echo "Bail out! fake-skilld --no-fds did not start"; exit 1; }
nofd() { DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/nofd.sock sc "$@"; }
nofd run "$EXAMPLES/shell-report"
check "no fds: an ad-hoc run is refused" test "$(rc)" = 125
check "no fds: it says why" has "cannot pass file descriptors over SSH: only installed skills run there" err
check "no fds: nothing reached the service" not grep -q "^run " "$T/report3"
nofd run shell-report --file in.txt="$T/in.txt"
check "no fds: --file is refused" test "$(rc)" = 125
nofd run shell-report
check "no fds: an installed skill runs" test "$(rc)" = 0
check "no fds: no output fds were passed" grep -q "skill=shell-report installed.*input=$" "$T/report3"
check "no fds: its stdout shown, read with ReadLog" test "$(cat "$T/out")" = "fake output of shell-report"
check "no fds: its stderr shown" grep -qx "fake diagnostics" "$T/err"
check "no fds: the summary" has "skillctl: succeeded, exit 0" err
nofd run shell-report --output-dir "$T/nofd-od"
check "no fds: --output-dir fetches in chunks" grep -qx "fake output of shell-report" "$T/nofd-od/stdout.log"
nofd logs aaaa
check "no fds: logs, stdout" test "$(cat "$T/out")" = "$(printf 'line one\nline two')"
check "no fds: logs, stderr" test "$(cat "$T/err")" = "a warning"
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/nofd.sock \
        timeout 30 "$SKILLCTL" logs -f eeee >"$T/out" 2>"$T/err"; echo $? >"$T/rc"
check "no fds: logs -f polls until the run ends" test "$(rc)" = 0 -a \
        "$(cat "$T/out")" = "$(printf 'tick 1\ntick 2\ntick 3\ntick 4\ntick 5')"
nofd artifacts aaaa --get report.txt -o -
check "no fds: --get -o -" test "$(cat "$T/out")" = "hello report"
check "no fds: read with ReadArtifact" grep -q "read-artifact aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa report.txt" "$T/report3"
nofd artifacts aaaa -o "$T/nofd-a"
check "no fds: artifacts -o, each file checked against its hash" test "$(rc)" = 0 -a \
        "$(cat "$T/nofd-a/data/table.csv")" = "$(printf 'a,b\n1,2')"
nofd artifacts dddd -o "$T/nofd-a2"
check "no fds: a copy not matching its hash is not written" test "$(rc)" = 1 -a ! -e "$T/nofd-a2/wrong-hash.txt"
nofd artifacts aaaa --get nope.txt -o "$T/nofd-a3"
check "no fds: --get of no such artifact: exit 4" test "$(rc)" = 4

tap_finish
