#!/bin/bash
# Runs one workload of the corpus with its interpreter; without an argument, lists them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# = 0 ]; then
        cd "$here/workloads" && ls -1 python/*.py node/*.js bash/*.sh
        exit 0
fi
w=$1
case $w in
python/*.py) interp=/usr/bin/python3 ;;
node/*.js) interp=node ;;
bash/*.sh) interp=/bin/bash ;;
*) echo "unknown workload $w" >&2; exit 2 ;;
esac
# Each workload works in a scratch directory of its own, where the sandbox's /tmp is.
scratch=$(mktemp -d)
cd "$scratch"
"$interp" "$here/workloads/$w"
echo "ok $w"
