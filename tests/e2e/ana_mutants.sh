#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every analysis command reaches the same verdict on the same file: on
# structure-aware mutants of small traces (tests/fuzz/mutate.py) either all
# succeed, with the same numbers (leaked bytes per process from report and
# leaks; report and leaks computed in one pass and in ranges on two
# threads), or all fail with exit 1 and a message naming the file.
# Usage: ana_mutants.sh [COUNT [FIRST_SEED]] (mutants per base trace).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-mutants MEMSCRIBE MS_SOURCE
count=${1:-15}
first=${2:-1}
cmds=("dump" "report" "leaks" "window" "timeline" "vmem" "frag" "histogram" "tree"
      "plot timeline" "plot histogram" "flamegraph" "html" "export --to csv -o $WORK/out.csv")

# leaked.py REPORT.json LEAKS.json: report's leaked bytes per process equal
# leaks' (processes that leak nothing left out).
cat >"$WORK/leaked.py" <<'PY'
import json, sys
rep = {p["image"]: p["leaked_bytes"] for p in json.load(open(sys.argv[1]))["processes"]}
lk = {p["image"]: p["leaked_bytes"] for p in json.load(open(sys.argv[2]))["processes"] if p["leaked_bytes"]}
want = {k: v for k, v in rep.items() if v}
sys.exit(0 if want == lk else "report says %s leaked, leaks %s" % (want, lk))
PY

# One mutant: every command, then the cross-checks if all succeeded.
check() {
    local f=$1 what=$2 verdicts="" rc cmd
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        timeout 60 "$MEMSCRIBE" $cmd "$f" >"$WORK/out" 2>"$WORK/err"
        rc=$?
        verdicts="$verdicts $rc"
        if [ "$rc" -eq 1 ] && ! grep -q "$f" "$WORK/err"; then
            fail "$what: $cmd: the message does not name the file: $(cat "$WORK/err")"
        fi
    done
    case "$verdicts" in
    *[!01\ ]* | *0*1* | *1*0*)
        fail "$what: verdicts differ (${cmds[*]}):$verdicts"
        return
        ;;
    *1*) return ;;
    esac
    for cmd in report leaks; do
        MEMSCRIBE_JOBS=1 "$MEMSCRIBE" $cmd --format=json "$f" >"$WORK/$cmd.1" 2>/dev/null
        MEMSCRIBE_JOBS=2 MEMSCRIBE_RANGE_EVENTS=1 "$MEMSCRIBE" $cmd --format=json "$f" \
            >"$WORK/$cmd.2" 2>/dev/null
        cmp -s "$WORK/$cmd.1" "$WORK/$cmd.2" || fail "$what: $cmd in one pass and in ranges differ"
    done
    python3 "$WORK/leaked.py" "$WORK/report.1" "$WORK/leaks.1" || fail "$what: leaked bytes differ"
}

n=0
for base in "$MS_SOURCE/tests/golden/v1.mscr" "$MS_SOURCE/tests/fuzz/base/procs.mscr"; do
    name=$(basename "$base" .mscr)
    mkdir -p "$WORK/$name"
    # Seed 0 is the trace re-encoded without a change: it must pass too.
    python3 "$MS_SOURCE/tests/fuzz/mutate.py" "$base" "$WORK/$name" 0 1 >/dev/null
    python3 "$MS_SOURCE/tests/fuzz/mutate.py" "$base" "$WORK/$name" "$first" "$count" \
        >"$WORK/$name.list" || { fail "mutate.py on $base"; continue; }
    check "$WORK/$name/m0.mscr" "$name m0 (unchanged)"
    while read -r file what; do
        check "$WORK/$name/$file" "$name $file ($what)"
        n=$((n + 1))
    done <"$WORK/$name.list"
done
finish "ana_mutants: ${#cmds[@]} commands agree on $n mutants"
