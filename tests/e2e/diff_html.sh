#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe html --base on two builds of one program
# (tests/programs/diff_prog.c), read by headless chromium: the summary
# shows each number's change, the cards the base's value, and the call
# site table per site the change against the base's site of the same
# function chain (+500 bytes for make_buffer, +64 leaked for leak_more,
# 0 for churn, whose two stacks share one chain). Needs MEMSCRIBE, MS_PROGRAMS, MS_SOURCE, chromium.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" diff-html MEMSCRIBE MS_PROGRAMS MS_SOURCE
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
B=$WORK/base.mscr N=$WORK/new.mscr

"$MEMSCRIBE" record -o "$B" -- "$MS_PROGRAMS/diff_base/diff_prog" >/dev/null 2>&1 || fail "record base"
"$MEMSCRIBE" record -o "$N" -- "$MS_PROGRAMS/diff_new/diff_prog" >/dev/null 2>&1 || fail "record new"
"$MEMSCRIBE" html --base "$B" "$N" -o "$WORK/r.html"
dump_dom "$WORK" "$WORK/dom.html" "$WORK/chrome.err" "$READY" "file://$WORK/r.html" ||
    fail "chromium failed: $(tail -5 "$WORK/chrome.err")"
[ -z "$(console_lines "$WORK/chrome.err")" ] || fail "console: $(console_lines "$WORK/chrome.err")"
grep -q '<body[^>]*data-errors' "$WORK/dom.html" && fail "script errors: $(grep -o 'data-errors="[^"]*"' "$WORK/dom.html")"

python3 - "$WORK/dom.html" >"$WORK/facts" <<'PY'
import sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.stack, self.rows, self.row, self.cell = {}, [], [], None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append((tag, a.get('id'), ''))
        if tag == 'tr' and a.get('class') == 'row':
            self.row = {}
        if tag == 'td' and self.row is not None:
            self.cell = (a.get('class') or '').split(' ')[0]
            self.row.setdefault(self.cell, '')
    def handle_endtag(self, tag):
        while self.stack:
            t, i, text = self.stack.pop()
            if i:
                self.ids[i] = text
            if self.stack:
                pt, pi, ptext = self.stack[-1]
                self.stack[-1] = (pt, pi, ptext + text)
            if t == tag:
                break
        if tag == 'td':
            self.cell = None
        if tag == 'tr' and self.row is not None:
            self.rows.append(self.row)
            self.row = None
    def handle_data(self, data):
        if self.stack:
            t, i, text = self.stack[-1]
            self.stack[-1] = (t, i, text + data)
        if self.row is not None and self.cell:
            self.row[self.cell] += data

p = P()
p.feed(open(sys.argv[1]).read())
for k in ('chg-allocations', 'chg-allocated_bytes', 'chg-peak_bytes', 'chg-leaked_bytes', 'chg-temporary'):
    print(k, p.ids.get(k, 'missing').strip())
print('card-base', 'db' if 'base.mscr' in p.ids.get('card-base', '') else 'missing')
print('card-leaked', p.ids.get('card-leaked', '').split('base')[-1].strip())
for r in p.rows:
    if 'c-dbytes' in r:
        fn = r.get('text', '') or r.get('fn', '')
        print('site', fn.split('(')[0].strip(), r['c-dbytes'], r['c-dleaked'], r['c-dallocs'])
PY
f() { grep "^$1 " "$WORK/facts" | head -1 | cut -d' ' -f2-; }
expect "summary: allocations" "$(f chg-allocations)" "[+1]"
expect "summary: bytes" "$(f chg-allocated_bytes)" "[+564]"
expect "summary: peak" "$(f chg-peak_bytes)" "[+500]"
expect "summary: leaked" "$(f chg-leaked_bytes)" "[+64]"
expect "summary: temporary" "$(f chg-temporary)" "[0]"
expect "card: the base's name" "$(f card-base)" db
expect "card: leaked" "$(f card-leaked)" "40, +64"
site() { grep "^site $1 " "$WORK/facts" | cut -d' ' -f3-; }
expect "site make_buffer: bytes leaked allocs" "$(site make_buffer)" "500 0 0"
expect "site leak_more" "$(site leak_more)" "64 64 1"
# churn's two mallocs are on one source line: their two stacks read the same
# and are one row, which shows the chain's change.
expect "site churn" "$(site churn)" "0 0 0"

# Without --base the page has no changes.
"$MEMSCRIBE" html "$N" -o "$WORK/plain.html"
grep -q '"base"' "$WORK/plain.html" && fail "plain report carries a base"
echo "PASS"
