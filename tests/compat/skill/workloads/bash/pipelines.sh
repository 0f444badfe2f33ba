#!/bin/bash
# Bash and the coreutils a shell skill strings together: pipelines, process substitution, here
# documents, background jobs, traps, archives, checksums.
set -euo pipefail
seq 1 1000 | awk '{ s += $1 } END { print s }' | grep -qx 500500
printf 'b 2\na 1\nb 3\n' | cut -d' ' -f1 | sort | uniq -c | sed 's/^ *//' | cut -d' ' -f1 | tr '\n' , | grep -q '^1,2,$'
diff <(printf 'x\n') <(echo x)
cat <<HERE | wc -l | grep -qx 2
one
two
HERE
( cd / && pwd ) | grep -qx /
sleep 0.1 & sleep 0.1 & wait
trap 'echo trapped >/dev/null' USR1
kill -USR1 $$
d=$(mktemp -d)
mkdir -p "$d/src/sub" && echo data >"$d/src/sub/f"
tar -C "$d" -czf "$d/a.tgz" src && tar -C "$d" -tzf "$d/a.tgz" | grep -q src/sub/f
find "$d" -name f -type f | xargs -r sha256sum | awk '{print $1}' | grep -q '^[0-9a-f]\{64\}$'
gzip -k "$d/src/sub/f" && gunzip -c "$d/src/sub/f.gz" | grep -qx data
date -u +%s >/dev/null
stat -c %s "$d/a.tgz" >/dev/null
readarray -t lines < <(printf '1\n2\n')
[ "${#lines[@]}" = 2 ]
coproc cat; echo hi >&"${COPROC[1]}"; read -r got <&"${COPROC[0]}"; [ "$got" = hi ]
exec {COPROC[1]}>&-; wait
ulimit -n >/dev/null
id -u >/dev/null
uname -a >/dev/null
env | grep -q '^HOME='
timeout 1 sleep 0.01
flock "$d/lock" true
rm -rf "$d"
