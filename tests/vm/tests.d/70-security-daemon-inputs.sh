#!/bin/bash
# The daemon's adversarial cases on what callers hand it (tests/security/daemon/README.md):
# D3, file descriptors that are not regular files open for reading (a directory, a pipe, a FIFO,
# an O_PATH fd, one of /etc/shadow too) as the skill or as an input file, are refused and start
# nothing; D4, a skill archive its owner rewrites in place after Run returned, or in a memfd
# without seals after or while Run is called, runs as it was when read, and is recorded so; D12,
# OpenArtifact never serves through a path trick or a link, whether the skill left it in
# /out/files or root planted it in the store.
# Each case ends with the daemon (same pid) serving another user.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s\nconcurrency:\n  per-user: 1\n  global: 4'

hello=$(make_skill hello 'echo "hello $1"')
assert_eq "succeeded 0" "$(call bob run --wait "$hello" bob | tail -n 1)" "bob's first run"
pid=$(daemon_main_pid)
n_records() {
    find "$SKILLD_STATE/runs" -mindepth 1 -maxdepth 1 | wc -l
}
# The daemon is the same process and serves bob.
still_serving() {
    assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid after $1"
    assert_eq "succeeded 0" "$(call bob run --wait "$hello" "after $1" | tail -n 1)" "bob's run after $1"
}

# D3. Not a regular file, as the skill and as an input file: refused, no record made.
mkdir -m 0777 d3
as_user alice mkdir d3/dir
as_user alice mkfifo d3/fifo
# A writer holds the FIFO open, so that the client's open(O_RDONLY) returns.
sleep 60 <>d3/fifo &
fifo_writer=$!
before=$(n_records)
# The pipe is alice's own (a pipe is its creator's, mode 0600): the client reopens it through
# /dev/stdin, /proc/self/fd/0.
client() {
    local what=$1
    shift
    case $what in
    dir) as_user alice "$SKILLD_CALL" run "${@/PATH/d3/dir}" ;;
    fifo) as_user alice "$SKILLD_CALL" run "${@/PATH/d3/fifo}" ;;
    pipe) as_user alice sh -c 'echo data | "$0" "$@"' "$SKILLD_CALL" run "${@/PATH//dev/stdin}" ;;
    esac
}
for what in dir fifo pipe; do
    err=$(client "$what" PATH 2>&1) && fail "a $what was accepted as the skill: $err"
    assert_contains "$err" "org.freedesktop.DBus.Error.InvalidArgs" "a $what as the skill"
    assert_contains "$err" "regular file" "a $what as the skill"
    echo "D3 $what as the skill: $err"
    err=$(client "$what" --file in=PATH "$hello" 2>&1) && fail "a $what was accepted as an input file: $err"
    assert_contains "$err" "The input file in is not a regular file open for reading" "a $what as input"
    echo "D3 $what as an input file: $err"
done
kill "$fifo_writer"
wait "$fifo_writer" 2>/dev/null || true
# O_PATH fds name a file without opening it; alice can make one of root's /etc/shadow (it takes
# only search permission on /etc). A service reopening it through /proc would read it for her.
ABUSE=$SKILLD_BUILD_ROOT/tests/security/daemon/skilld-abuse
for target in "$hello" /etc/shadow; do
    out=$(as_user alice "$ABUSE" opath-skill "$target") ||
        fail "an O_PATH fd of $target was accepted as the skill: $out"
    assert_contains "$out" \
        "org.freedesktop.DBus.Error.InvalidArgs: The skill file descriptor is not open for reading" \
        "an O_PATH fd of $target as the skill"
    echo "D3 O_PATH fd of $target as the skill: $out"
    out=$(as_user alice "$ABUSE" opath-input "$hello" "$target") ||
        fail "an O_PATH fd of $target was accepted as an input file: $out"
    assert_contains "$out" "The input file in is not a regular file open for reading" \
        "an O_PATH fd of $target as input"
    echo "D3 O_PATH fd of $target as an input file: $out"
done
assert_eq "$before" "$(n_records)" "records after the refused calls"
if grep -rqsF "$(head -c 20 /etc/shadow)" "$SKILLD_STATE/runs"; then
    fail "a byte of /etc/shadow is in the store"
fi
still_serving D3

# D4. alice's skill is queued behind her running one (per-user 1); she then rewrites its file in
#     place (same inode) with another skill. The run executes what was submitted.
sleeper=$(make_skill sleeper 'echo started; sleep "${1:-30}"')
busy=$(call alice run "$sleeper" 60)
wait_until 60 grep -q started "$SKILLD_STATE/runs/$busy/stdout.log" || fail "alice's sleeper did not start"
mkdir -m 0777 d4
v1=$(cd d4 && make_skill swap 'echo "version one"')
v2=$(cd d4 && make_skill swap2 'echo "version two"')
chmod 0666 "$v1"
id=$(call alice run "$v1")
assert_eq 's "queued"' "$(run_prop "$id" State alice)" "the submitted run behind the sleeper"
inode=$(stat -c %i "$v1")
as_user alice sh -c 'cat "$1" >"$2"' sh "$v2" "$v1"
assert_eq "$inode" "$(stat -c %i "$v1")" "the rewritten archive's inode"
cmp -s "$v1" "$v2" || fail "the archive was not rewritten"
run_method alice "$busy" Cancel
assert_eq "finished succeeded 0" "$(call alice wait "$id")" "the swapped run"
assert_eq "version one" "$(call alice log "$id" stdout)" "what the swapped run printed"
echo "D4 the archive rewritten after Run: the run printed what was submitted"

# D4, memfds without seals. Rewritten with another skill once Run answered: the run is what was
#     submitted, its recorded hash that of the submitted tree. Rewritten over and over by a
#     second process while the call is in flight: refused, or a run of one of the two skills
#     whole, its recorded hash that of what it ran.
#     Names and scripts of one length, so that the archives likely are too and the file flips
#     from one whole archive to the other.
v1=$(cd d4 && make_skill memone 'echo "version one"')
v2=$(cd d4 && make_skill memtwo 'echo "version two"')
echo "D4 memfd archives of $(stat -c %s "$v1") and $(stat -c %s "$v2") bytes"
h1=$(skillctl skill show d4/memone | sed -n 's/^ *Hash: sha256://p')
h2=$(skillctl skill show d4/memtwo | sed -n 's/^ *Hash: sha256://p')
[[ -n $h1 && -n $h2 && $h1 != "$h2" ]] || fail "no hashes of the two skills: '$h1' '$h2'"
out=$(as_user alice "$ABUSE" memfd-swap after "$v1" "$v2") || true
id=${out#accepted }
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "the Run of a memfd: $out"
assert_eq "finished succeeded 0" "$(call alice wait "$id")" "the memfd run"
assert_eq "version one" "$(call alice log "$id" stdout)" "what the memfd run printed"
assert_contains "$(run_prop "$id" SkillHash alice)" "$h1" "the memfd run's recorded hash"
echo "D4 a memfd rewritten after Run: the run printed what was submitted"
for i in 1 2 3 4; do
    out=$(as_user alice "$ABUSE" memfd-swap during "$v1" "$v2") || true
    case $out in
    "accepted "*)
        id=${out#accepted }
        assert_eq "finished succeeded 0" "$(call alice wait "$id")" "memfd run $i"
        printed=$(call alice log "$id" stdout)
        case $printed in
        "version one") want=$h1 ;;
        "version two") want=$h2 ;;
        *) fail "memfd run $i printed neither version: $printed" ;;
        esac
        assert_contains "$(run_prop "$id" SkillHash alice)" "$want" "memfd run $i's recorded hash"
        echo "D4 a memfd rewritten during Run, try $i: ran $printed, recorded as such"
        ;;
    io.skilld.Skilld1.Error.InvalidSkill:*)
        echo "D4 a memfd rewritten during Run, try $i: refused: $out"
        ;;
    *)
        fail "memfd rewritten during Run, try $i: $out"
        ;;
    esac
done
still_serving D4

# D12. Links, FIFOs and path tricks in /out/files, and links root plants in the store.
tricky=$(make_skill tricky "$(cat <<'SH'
cd "$SANDBOX_FILES_DIR"
echo fine >ok.txt
ln -s /etc/shadow shadow
ln -s ok.txt alias
mkfifo fifo
mkdir -p sub
ln -s / sub/root
ln -s .. sub/up
echo done
SH
)")
id=$(call alice run --wait "$tricky" | head -n 1)
assert_eq 's "finished"' "$(run_prop "$id" State alice)" "the tricky run"
arts=$SKILLD_STATE/runs/$id/artifacts
odd=$(find "$arts" -mindepth 1 ! -type f ! -type d)
[[ -z $odd ]] || fail "the store holds non-regular artifacts: $odd"
assert_eq fine "$(call alice artifact "$id" ok.txt)" "the regular artifact"
ln -s /etc/shadow "$arts/planted"
ln -s / "$arts/planted-dir"
mkfifo "$arts/planted-fifo"
for path in shadow alias fifo sub/root/etc/shadow sub/up/request.json ../request.json \
    ../../../../etc/shadow ./ok.txt /etc/shadow planted planted-dir/etc/shadow planted-fifo \
    ok.txt/.. "sub//..//../result.json"; do
    if out=$(timeout 30 "$SKILLD_CALL" artifact "$id" "$path" 2>&1); then
        fail "OpenArtifact served '$path' (as root even): $out"
    fi
    err=$(call alice artifact "$id" "$path" 2>&1) && fail "OpenArtifact served '$path' to alice: $err"
    [[ $err != *root:* ]] || fail "shadow content in the error for $path"
    echo "D12 OpenArtifact '$path': $err"
done
still_serving D12
