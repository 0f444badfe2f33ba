#!/bin/bash
# skilld's root socket /run/skilld/private: there while the service runs (made once it holds its
# bus name), root's alone, and root's skillctl goes there first, past the bus daemon, as
# systemctl goes to /run/systemd/private; the first call, with skilld not running, goes through
# the bus, which activates it. Everyone else goes through the bus. A root client connected there
# keeps skilld from its idle exit, and the socket goes with the service.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'
is_inactive || fail "skilld runs before the test"
[[ ! -e /run/skilld/private ]] || fail "a root socket while skilld is stopped"
make_skill hello 'echo "hello $1"' >/dev/null
chmod -R a+rX .

# 1. Not running: the bus, which starts skilld; running: the root socket, root's alone.
out=$(skillctl -v run --system -q ./hello first 2>err) || fail "the first run: $(cat err)"
assert_eq "hello first" "$out" "the first run's output"
grep -q "Talking to skilld on the system bus" err || fail "the first run did not go through the bus: $(cat err)"
[[ -S /run/skilld/private ]] || fail "no root socket while skilld runs"
assert_eq "600 root" "$(stat -c '%a %U' /run/skilld/private)" "the root socket's mode and owner"
out=$(skillctl -v run --system -q ./hello second 2>err) || fail "the second run: $(cat err)"
assert_eq "hello second" "$out" "the second run's output"
grep -q "Talking to skilld on /run/skilld/private" err || fail "root's run did not use the root socket: $(cat err)"
echo "root: the first run through the bus, the next on /run/skilld/private"

mkdir alice
chown alice: alice
out=$(cd alice && as_user alice skillctl -v run --system -q ../hello alice 2>../err) || fail "alice's run: $(cat err)"
assert_eq "hello alice" "$out" "alice's run's output"
grep -q "Talking to skilld on the system bus" err || fail "alice's run did not go through the bus: $(cat err)"
refused=$(as_user alice python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("/run/skilld/private")
    print("connected")
except OSError as e:
    print(e.errno)')
assert_eq 13 "$refused" "alice's connect() to the root socket (EACCES)"
echo "alice: through the bus, and the root socket refused her"

# 2. A root client, authenticated and idle, holds skilld past its idle timeout (5 s); once it
#    left, skilld exits and takes the socket along.
daemon_policy $'service:\n  idle-timeout: 5s'
[[ ! -e /run/skilld/private ]] || fail "the root socket outlived a stopped skilld"
systemctl start skilld.service
wait_until 30 test -S /run/skilld/private || fail "no root socket after skilld started"
coproc holder {
    python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/run/skilld/private")
s.sendall(b"\0AUTH EXTERNAL 30\r\n")
reply = s.recv(256)
if not reply.startswith(b"OK "):
    sys.exit("no OK: %r" % reply)
s.sendall(b"BEGIN\r\n")
print("authenticated", flush=True)
sys.stdin.readline()'
}
read -r line <&"${holder[0]}" || fail "the root client did not authenticate"
assert_eq authenticated "$line" "the root client"
sleep 12
systemctl -q is-active skilld.service || fail "skilld exited while a root client was connected"
[[ -S /run/skilld/private ]] || fail "the root socket went while a root client was connected"
echo >&"${holder[1]}"
# shellcheck disable=SC2154 # coproc sets holder_PID
wait "$holder_PID" || fail "the root client failed"
wait_until 30 is_inactive || fail "skilld did not exit once the root client left"
[[ ! -e /run/skilld/private ]] || fail "the root socket outlived skilld"
echo "a root client held skilld past its idle timeout; skilld went with the socket once it left"
