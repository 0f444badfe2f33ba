#!/bin/bash
# Fail on purpose, with the exit code asked for in the input (default 3).
input=$(cat)
code=$(printf '%s' "$input" | sed -n 's/.*"code"[[:space:]]*:[[:space:]]*\([0-9]*\).*/\1/p')
echo "always-fails: giving up on purpose" >&2
exit "${code:-3}"
