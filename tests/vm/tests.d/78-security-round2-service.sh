#!/bin/bash
# The outside red team's findings (issue 12) through the service, where the daemon's workers run
# the engine under systemd scopes and cgroup v2, each judged by its effect here: a skill's escape
# sequences on alice's terminal (a pty from script(1)), her umask on the files skillctl writes
# into an output directory she already has, a FIFO she names, loopback socket queues against the
# memory limit (the host-wide socket memory sampled while the run holds them), and the host-wide
# counters, watches and /proc files a run must not reach. The embedded engine's cases run in the
# adversarial suite (tests/security), here too.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s'

work=$(mktemp -d /var/tmp/round2-XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
cd "$work"
install -d -o alice -m 0755 "$work/alice"

# skill NAME BODY [EXT]: a skill folder NAME alice can read.
skill() {
    make_skill "$1" "$2" "${3:-sh}" >/dev/null
    chmod -R a+rX "$work/$1"
    echo "$work/$1"
}

# 1. The caller's terminal: what the skill writes reaches alice's pty escaped.
if command -v script >/dev/null; then
    esc=$(skill esc 'printf "\033]52;c;ZWNobyBvd25lZA==\007\033]0;owned\007\033[6n\033(0\233 \302\233 cr\rx caf\303\251\n"
printf "\033[2J\n" >&2')
    # --no-ask-password: on a terminal skillctl would start pkttyagent, which the rule makes
    # needless; timeout: a hang fails here instead of at the suite's limit.
    as_user alice timeout -s KILL 120 script -qec \
        "skillctl --no-ask-password run --system -q --output-dir $work/alice/esc $esc" /dev/null \
        </dev/null >"$work/screen" 2>&1 || fail "the escaping run failed: $(od -c "$work/screen" | head)"
    # Every ESC, 8-bit CSI and CR that reached the terminal: the pty's own \r\n and skillctl's
    # attribute reset aside, none.
    raw=$(python3 -c 'import sys
d = open(sys.argv[1], "rb").read().replace(b"\x1b[0m", b"").replace(b"\r\n", b"\n")
print(sum(d.count(c) for c in (b"\x1b", b"\x9b", b"\r")))' "$work/screen")
    [[ $raw == 0 ]] || fail "$raw raw control bytes reached the terminal: $(od -c "$work/screen" | head -20)"
    grep -qF '\x1b]52;c;' "$work/screen" || fail "the OSC 52 is not shown escaped: $(cat -v "$work/screen")"
    grep -qF $'caf\xc3\xa9' "$work/screen" || fail "UTF-8 text did not pass: $(cat -v "$work/screen")"
    grep -qF $'\x1b]52;c;ZWNobyBvd25lZA==' "$work/alice/esc/stdout.log" ||
        fail "stdout.log does not keep the bytes"
    echo "terminal: escaped on the pty, byte-exact in stdout.log"
else
    echo "terminal: script(1) is not in the image; skipped"
fi

# 2. umask 077 and an output directory that exists: nothing skillctl writes is open to others.
echo_in=$(skill echo-in 'cat "$SKILL_INPUT_FILE"; cp "$SKILL_INPUT_FILE" /out/files/copy.json')
install -d -o alice -m 0755 "$work/alice/umask"
as_user alice sh -c "umask 077; exec skillctl run --system -q --input '{\"secret\": 1}' --output-dir $work/alice/umask $echo_in" \
    >/dev/null || fail "the umask run failed"
open=$(find "$work/alice/umask" -mindepth 1 -perm /077 -printf '%p %m\n')
[[ -z $open ]] || fail "open to others under umask 077: $open"
[[ -e $work/alice/umask/stdout.log && -e $work/alice/umask/result.json ]] || fail "no logs or result"
echo "umask: $(find "$work/alice/umask" -mindepth 1 | wc -l) files, none open to others"

# 3. A FIFO as --file: refused at once, saying why.
mkfifo -m 0644 "$work/fifo"
rc=0
as_user alice timeout -s KILL 20 skillctl run --system -q --file "data=$work/fifo" "$echo_in" \
    >/dev/null 2>"$work/err" || rc=$?
[[ $rc != 137 ]] || fail "skillctl hung on the FIFO"
grep -q 'not a regular file' "$work/err" || fail "FIFO: exit $rc, $(cat "$work/err")"
echo "fifo: exit $rc, $(cat "$work/err")"

# 4. Loopback queues nobody reads, under a 64M limit: the host's socket memory, sampled.
socket_pages() { awk '/^TCP:|^UDP:/ { for (i = 1; i < NF; i++) if ($i == "mem") s += $(i + 1) } END { print s + 0 }' /proc/net/sockstat; }
hold=$(skill hold 'import socket, time
big = 64 << 20
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64)
held, pairs, stalls = 0, [], 0
while held < (256 << 20) and stalls < 3:
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, big)
    c.connect(srv.getsockname()); s, _ = srv.accept()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, big); c.setblocking(False)
    pairs.append((c, s)); before = held
    while True:
        try:
            held += c.send(b"x" * 65536)
        except (BlockingIOError, OSError):
            break
    stalls = stalls + 1 if held - before < 65536 else 0
print("queued", held >> 20, flush=True)
time.sleep(3)' py)
base=$(socket_pages)
peak=$base
as_user alice skillctl run --system --memory 64M --timeout 60 --output-dir "$work/alice/hold" "$hold" \
    >"$work/hold.out" 2>&1 &
client=$!
while kill -0 "$client" 2>/dev/null; do
    v=$(socket_pages)
    ((v > peak)) && peak=$v
    sleep 0.1
done
wait "$client" || true
rose=$(((peak - base) * $(getconf PAGESIZE) >> 20))
echo "sockets: $(tr '\n' ' ' <"$work/hold.out"); host socket memory +${rose}M"
((rose <= 72)) || fail "a 64M run held ${rose}M of host socket memory"

# 5. Host-wide counters, watches, /proc: AIO and inotify refused, the host's identity unreadable
# (command line, boot id, load, the store's path in mountinfo).
probe=$(skill probe 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
r = libc.syscall(206, 4096, ctypes.byref(ctx))
print("aio", ctypes.get_errno() if r < 0 else 0)
r = libc.inotify_init1(0)
print("inotify", ctypes.get_errno() if r < 0 else 0)
print("cmdline", len(open("/proc/cmdline").read()))
print("boot_id", len(open("/proc/sys/kernel/random/boot_id").read()))
print("loadavg", open("/proc/loadavg").read().strip())
# mountinfo: /skill rooted at its own "/", no root (field 4) under a host place such as the store.
mounts = [l.split() for pid in ("self", "1") for l in open("/proc/%s/mountinfo" % pid)]
print("skill-root", " ".join(sorted(set(m[3] for m in mounts if m[4] == "/skill"))))
print("host-roots", sum(1 for m in mounts if m[3].startswith(("/var", "/home", "/tmp", "/root", "/srv", "/run/skilld"))))' py)
out=$(as_user alice skillctl run --system -q --output-dir "$work/alice/probe" "$probe")
want="aio 38
inotify 38
cmdline 0
boot_id 0
loadavg 0.00 0.00 0.00 1/1 1"
# Without overlayfs (this image has no kernel modules) the engine binds the tree and mountinfo
# shows the store's path, as the README says: then only the rest is asserted.
if grep -qw overlay /proc/filesystems; then
    want+=$'\nskill-root /\nhost-roots 0'
else
    echo "mountinfo: no overlayfs here, the tree is bound: $(echo "$out" | grep -E '^(skill-root|host-roots) ' | tr '\n' ' ')"
    out=$(echo "$out" | grep -vE '^(skill-root|host-roots) ')
fi
assert_eq "$want" "$out" "AIO, inotify and /proc through the service"
echo "counters: $(echo "$out" | tr '\n' ' ')"
