#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every analysis command reaches the same verdict on the same file: on
# structure-aware mutants of small traces (tests/fuzz/mutate.py) either all
# succeed, with the same numbers (leaked bytes per process from report and
# leaks; report and leaks computed in one pass and in ranges on two
# threads), or all fail with exit 1 and a message naming the file.
# Usage: ana_mutants.sh [COUNT [FIRST_SEED]] (mutants per base trace).
set -uo pipefail
: "${MEMSCRIBE:?}" "${MS_SOURCE:?}"
count=${1:-15}
first=${2:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cmds=("dump" "report" "leaks" "window" "timeline" "vmem" "frag" "histogram" "tree"
      "plot timeline" "plot histogram" "flamegraph" "html" "export --to csv -o $tmp/out.csv")

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# leaked.py REPORT.json LEAKS.json: report's leaked bytes per process equal
# leaks' (processes that leak nothing left out).
cat >"$tmp/leaked.py" <<'PY'
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
        timeout 60 "$MEMSCRIBE" $cmd "$f" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        verdicts="$verdicts $rc"
        if [ "$rc" -eq 1 ] && ! grep -q "$f" "$tmp/err"; then
            fail "$what: $cmd: the message does not name the file: $(cat "$tmp/err")"
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
        MEMSCRIBE_JOBS=1 "$MEMSCRIBE" $cmd --format=json "$f" >"$tmp/$cmd.1" 2>/dev/null
        MEMSCRIBE_JOBS=2 MEMSCRIBE_RANGE_EVENTS=1 "$MEMSCRIBE" $cmd --format=json "$f" \
            >"$tmp/$cmd.2" 2>/dev/null
        cmp -s "$tmp/$cmd.1" "$tmp/$cmd.2" || fail "$what: $cmd in one pass and in ranges differ"
    done
    python3 "$tmp/leaked.py" "$tmp/report.1" "$tmp/leaks.1" || fail "$what: leaked bytes differ"
}

n=0
for base in "$MS_SOURCE/tests/golden/v1.mscr" "$MS_SOURCE/tests/fuzz/base/procs.mscr"; do
    name=$(basename "$base" .mscr)
    mkdir -p "$tmp/$name"
    # Seed 0 is the trace re-encoded without a change: it must pass too.
    python3 "$MS_SOURCE/tests/fuzz/mutate.py" "$base" "$tmp/$name" 0 1 >/dev/null
    python3 "$MS_SOURCE/tests/fuzz/mutate.py" "$base" "$tmp/$name" "$first" "$count" \
        >"$tmp/$name.list" || { fail "mutate.py on $base"; continue; }
    check "$tmp/$name/m0.mscr" "$name m0 (unchanged)"
    while read -r file what; do
        check "$tmp/$name/$file" "$name $file ($what)"
        n=$((n + 1))
    done <"$tmp/$name.list"
done
[ "$fails" -eq 0 ] && echo "ana_mutants: ${#cmds[@]} commands agree on $n mutants"
exit $((fails > 0))
