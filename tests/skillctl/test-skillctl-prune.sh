#!/bin/bash
# skillctl runs prune: removes the output folders of ended runs from ./skill-out by age, keeping
# the newest --keep; never a folder still in progress (no result.json), never one not named as a
# run id, never through a symlink; --dry-run removes nothing. Prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

n=0
failed=0
check() {
        local what=$1; shift
        n=$((n + 1))
        if "$@"; then echo "ok $n - $what"; else
                failed=$((failed + 1)); echo "not ok $n - $what"
                echo "# out: $(cat "$T/out" 2>/dev/null) err: $(cat "$T/err" 2>/dev/null)"
        fi
}
sc() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }

# run DAYS-AGO N: an ended run folder whose result.json is DAYS-AGO days old.
run() {
        local id
        id=$(printf '%032x' "$2")
        mkdir -p "skill-out/$id/files"
        echo '{}' >"skill-out/$id/result.json"
        touch -d "$1 days ago" "skill-out/$id/result.json"
        echo "$id"
}
old1=$(run 30 1); old2=$(run 20 2); old3=$(run 10 3); new1=$(run 1 4); new2=$(run 0 5)
inprogress=$(printf '%032x' 6) && mkdir -p "skill-out/$inprogress" && touch -d "40 days ago" "skill-out/$inprogress"
mkdir -p skill-out/notes && echo keep >skill-out/notes/result.json && touch -d "40 days ago" skill-out/notes/result.json
mkdir -p elsewhere/target && echo '{}' >elsewhere/target/result.json
ln -s ../elsewhere/target "skill-out/$(printf '%032x' 7)"

sc runs prune --dry-run --keep 1
check "dry run exits 0" test "$(cat "$T/rc")" = 0
check "dry run names what it would remove" grep -q "would remove skill-out/$old1" "$T/out"
check "dry run removes nothing" test -d "skill-out/$old1" -a -d "skill-out/$old2" -a -d "skill-out/$old3"

sc runs prune --keep 1
check "prune exits 0" test "$(cat "$T/rc")" = 0
check "runs older than 7 days are gone" test ! -e "skill-out/$old1" -a ! -e "skill-out/$old2" -a ! -e "skill-out/$old3"
check "recent runs stay" test -d "skill-out/$new1" -a -d "skill-out/$new2"
check "a run in progress (no result.json) stays" test -d "skill-out/$inprogress"
check "a folder not named as a run id stays" test -f skill-out/notes/result.json
check "a symlink is neither followed nor removed" test -L "skill-out/$(printf '%032x' 7)" -a -f elsewhere/target/result.json
check "it says how many" grep -qx "skill-out: 3 of 5 runs removed, 2 kept." "$T/out"

sc runs prune --older-than 0 --keep 1
check "--older-than 0 --keep 1 keeps only the newest" test -d "skill-out/$new2" -a ! -e "skill-out/$new1"
sc runs prune --older-than 0 --keep 0
check "--keep 0 removes every ended run" test ! -e "skill-out/$new2"
sc runs prune --older-than soon
check "a bad duration is refused (2)" test "$(cat "$T/rc")" = 2
check "... naming it" grep -q "soon: --older-than: not a duration" "$T/err"
(cd elsewhere && "$SKILLCTL" runs prune >"$T/out" 2>&1)
check "no skill-out: nothing to do" grep -q "skill-out: no such folder, nothing to prune." "$T/out"

echo "1..$n"
[ "$failed" -eq 0 ]
