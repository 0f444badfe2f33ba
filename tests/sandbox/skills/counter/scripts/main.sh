#!/bin/sh
# One more than the last run left in /work/count.
n=$(cat /work/count 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" >/work/count
echo "$n"
