#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Call trees of deep recursion as JSON: `tree` and `window --tree` must
# write a document python3's json module reads, with every level, at the
# default depth (64 frames) and at record's deepest (--depth 256).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-deep MEMSCRIBE MS_PROGRAMS

# check FILE.json WANT: the number of nested "dive" nodes on the path to
# the 100 leaked bytes, following the first child.
check() {
    local got
    got=$(python3 - "$1" <<'PY'
import json, sys
node = json.load(open(sys.argv[1]))
n = 0
while node["children"]:
    node = node["children"][0]
    n += node["function"].startswith("dive")
print(n)
PY
)
    if [ "$got" != "$2" ]; then
        fail "$1: $got dive levels in the JSON tree, want $2"
    fi
}

run() { # name depth-option levels want
    local name=$1 opt=$2 levels=$3 want=$4
    # shellcheck disable=SC2086 # no option or one
    "$MEMSCRIBE" record -q $opt -o "$WORK/$name.mscr" -- "$MS_PROGRAMS/ana_deep" "$levels" ||
        { fail "record $name"; return; }
    for cmd in "tree --depth 0" "tree --bottom-up --depth 0" "window --tree"; do
        local out="$WORK/$name-${cmd// /_}.json"
        # shellcheck disable=SC2086 # the command's words
        if ! "$MEMSCRIBE" $cmd --format=json "$WORK/$name.mscr" >"$out"; then
            fail "$cmd --format=json on $name failed"
            continue
        fi
        check "$out" "$want"
    done
}

# 40 levels + the bottom: 41 dive frames, all within 64.
run d40 "" 40 41
# 300 levels cut at 256 frames: dive fills all but none (the leaf end is kept).
run d300 "--depth 256" 300 256
# A stack cut at the recorder's depth limit has no root side: top-down it
# hangs under one node that says so, not as a root of its own ("dive").
roots() { "$MEMSCRIBE" tree --depth 1 --format=csv "$1" | awk -F, 'NR > 1 { print $2 }' | sort -u | tr '\n' ' '; }
got=$(roots "$WORK/d300.mscr")
if [ "$got" != '"(stack cut at 256 frames)" ' ]; then
    fail "d300: tree roots are $got, want only the cut-stack node"
fi
case $(roots "$WORK/d40.mscr") in
*dive* | *cut*) fail "d40 (not cut): roots $(roots "$WORK/d40.mscr")" ;;
esac
finish "ana_deep: JSON trees of 41 and 256 levels read back"
