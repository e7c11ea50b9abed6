#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# speedscope (the npm package's built files, installed by scripts/setup.sh
# --test, served from 127.0.0.1: no network) opens memscribe's folded
# export of tests/programs/export_prog in headless Chromium through its
# #profileURL= parameter: the flame graph comes up under the profile's
# title, and its Sandwich table's self costs add up to the cost of
# `memscribe report --format=json` (bytes allocated; bytes leaked).
# Screenshot: export_view_speedscope.png (the flame graph).
source "$(dirname "$0")/export_lib.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$(dirname "$0")/view_lib.sh"
SPEEDSCOPE=${MEMSCRIBE_SPEEDSCOPE:-/usr/local/share/memscribe-test/node_modules/speedscope/dist/release}
need_viewer speedscope "$SPEEDSCOPE/index.html" /usr/bin/chromedriver /usr/lib/chromium/chromium
"$PY" -c 'import selenium' 2>/dev/null || need_viewer speedscope /usr/lib/python3/dist-packages/selenium

recorded
mkdir "$T/www"
cp -r "$SPEEDSCOPE" "$T/www/speedscope"
"$M" export --to folded "$T/prog.mscr" -o "$T/www/bytes.folded"
"$M" export --to folded --cost leaked "$T/prog.mscr" -o "$T/www/leaked.folded"
view_serve "$T/www"
open() { # name folded-file
    view_page "$1" "$VIEW_URL/speedscope/index.html#profileURL=$VIEW_URL/$2&title=export_prog" \
        --wait "export_prog" --wait-css "canvas" "${@:3}"
}
open export_view_speedscope bytes.folded --size 1280x700
# The Sandwich view's table: per function a total, then (tab-indented)
# its self cost and its name.
self_sum() {
    awk '/^\t[0-9,]+ \(/ { v = $1; gsub(",", "", v); s += v } END { print s + 0 }' "$1"
}
for c in bytes:REPORT_BYTES leaked:REPORT_LEAKED; do
    cost=${c%%:*} var=${c#*:}
    open "speedscope_$cost" "$cost.folded" --click-text Sandwich --wait "Symbol Name"
    rm -f "$ART/speedscope_$cost.png"
    expect_eq "speedscope's $cost (self costs added up)" "$(self_sum "$T/speedscope_$cost.txt")" "${!var}"
done
grep -q "^[[:space:]]*churn$" "$T/speedscope_bytes.txt" || fail "no churn row in speedscope's Sandwich table"
echo "export_view_speedscope: ok ($REPORT_BYTES bytes, $REPORT_LEAKED leaked)"
