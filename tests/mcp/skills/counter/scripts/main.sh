#!/bin/bash
set -e
n=$(cat /work/count 2> /dev/null || echo 0)
n=$((n + 1))
echo "$n" > /work/count
echo "{\"count\": $n}"
