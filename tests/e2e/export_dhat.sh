#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# DHAT export loaded by valgrind's dh_view.html in headless Chromium: the
# viewer builds its tree without an error and shows memscribe's totals.
source "$(dirname "$0")/export_lib.sh"
need chromium
DH=/usr/libexec/valgrind
[ -f "$DH/dh_view.js" ] || fail "$DH/dh_view.js missing: install valgrind"

# Load a DHAT file the way dh_view's Load button does (JSON.parse,
# buildTree, displayTree), in a page that embeds the file, and print the
# page's text. The page's onload says it has run, the tree shown or its
# error, in <body data-done="1">: chromium dumps the DOM once the page
# loaded and its virtual time budget ran out, which does not say that, so
# a dump without it is taken again, for up to 60 s.
view() { # dhat-file
    local end=$((SECONDS + 60))
    {
        printf '<!DOCTYPE html><html><head><meta charset="UTF-8">\n'
        printf '<link rel="stylesheet" href="file://%s/dh_view.css">\n' "$DH"
        printf '<script src="file://%s/dh_view.js"></script>\n<script>const MS_JSON = "' "$DH"
        # The file as a JS string literal: escape backslashes, quotes, newlines.
        sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/$/\\n/' "$1" | tr -d '\n'
        printf '";</script></head>\n<body onload="onLoad(); try { tryFunc(() => { gData = JSON.parse(MS_JSON); '
        printf 'buildTree(); displayTree(0, 0, 0); }); } finally { document.body.dataset.done = 1; }">'
        printf '</body></html>\n'
    } >"$T/view.html"
    while :; do
        timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
            --disable-component-update --disable-sync --no-first-run --user-data-dir="$T/chromium" \
            --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom \
            "file://$T/view.html" >"$T/dom.html" 2>"$T/chromium.err" ||
            fail "chromium failed: $(tail -5 "$T/chromium.err")"
        grep -q '<body[^>]* data-done="1"' "$T/dom.html" && break
        ((SECONDS < end)) || fail "dh_view's page did not finish in 60 s (no data-done in its DOM)"
    done
    # Text only, one line per text node.
    sed -e 's/<[^>]*>/\n/g' "$T/dom.html" | sed -e 's/&nbsp;/ /g' -e 's/&amp;/\&/g' |
        grep -v '^[[:space:]]*$' >"$T/dom.txt"
    grep -q "Invocation {" "$T/dom.txt" || fail "dh_view showed no data: $(grep -i error "$T/dom.txt" | head -3)"
    ! grep -qi "error" "$T/dom.txt" || fail "dh_view error: $(grep -i error "$T/dom.txt" | head -3)"
}

syn=$(synth)
"$M" export --to dhat "$syn" -o "$T/syn.json"
view "$T/syn.json"
grep -q "^2,296 bytes (100%" "$T/dom.txt" || fail "total bytes: $(grep -A3 'Total:' "$T/dom.txt" | head -4)"
grep -q "^9 blocks (100%" "$T/dom.txt" || fail "total blocks"
grep -q "At t-gmax: 1,500 bytes (100%) in 3 blocks (100%)" "$T/dom.txt" || fail "at t-gmax"
grep -q "At t-end:  182 bytes (100%) in 2 blocks (100%)" "$T/dom.txt" || fail "at t-end"
grep -q "t-gmax: 9,000 µs" "$T/dom.txt" || fail "t-gmax time"
grep -q "#1: 0x3100: libc#.so+0x100 (in /opt/lib#1/libc#.so)" "$T/dom.txt" || fail "frames"

# A stack that appears twice is refused by dh_view: check the viewer does
# reject such a file, so the test above can fail; refused by dh_view itself
# (its error on the finished page, not a page that never finished).
sed -e 's/"fs":\[4,2,3\]/"fs":[1,2,3]/' "$T/syn.json" >"$T/dup.json"
rm -f "$T/dom.txt"
if (view "$T/dup.json") 2>/dev/null; then fail "dh_view accepted a repeated stack"; fi
grep -qi "error" "$T/dom.txt" 2>/dev/null || fail "dh_view refused the repeated stack without saying why"

recorded
"$M" export --to dhat "$T/prog.mscr" -o "$T/prog.json"
view "$T/prog.json"
grep -q "^$(commas "$REPORT_BYTES") bytes (100%" "$T/dom.txt" || fail "recorded total bytes"
grep -q "^$(commas "$REPORT_ALLOCS") blocks (100%" "$T/dom.txt" || fail "recorded total blocks"
grep -q "At t-gmax: $(commas "$REPORT_PEAK") bytes (100%)" "$T/dom.txt" || fail "recorded peak"
grep -q "At t-end:  $(commas "$REPORT_LEAKED") bytes (100%)" "$T/dom.txt" || fail "recorded leaks"
grep -q ": churn (.*export_prog.c:[0-9]*:[0-9]*)" "$T/dom.txt" || fail "no churn frame"
echo "export_dhat: ok"
