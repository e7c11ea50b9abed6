#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Strings from a trace are text, never markup: a synthetic trace
# (tests/unit/pic_synth.c) whose command line is
# `/bin/evil </script><img src=x onerror=alert(1)>`, whose thread is named
# `<evilthread>t</evilthread>&amp;`, whose host is `<evilhost>h</evilhost>` and whose frames are named after the module
# `/nonexistent/<img src=x onerror=alert(3)>.so`. Every SVG stays
# well-formed and shows them escaped; in Chromium the HTML report shows
# them as text: no element came from the trace, the script ran to the end
# and the console is silent.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" pic-escape MEMSCRIBE MS_BUILD MS_SOURCE
# shellcheck source=tests/e2e/html_chrome.sh
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
T=$WORK/evil.mscr


"$MS_BUILD/tests/unit/pic_synth" "$T"
# The frames really are named after the module (else this test proves
# nothing about function names).
"$MEMSCRIBE" flamegraph --folded "$T" -o "$WORK/evil.folded"
has "$WORK/evil.folded" "<img src=x onerror=alert(3)>.so"

for what in timeline histogram; do
    "$MEMSCRIBE" plot "$what" "$T" -o "$WORK/$what.svg"
done
for cost in bytes allocations leaked; do
    "$MEMSCRIBE" flamegraph --cost "$cost" "$T" -o "$WORK/flame-$cost.svg"
done
"$MEMSCRIBE" flamegraph --inverted "$T" -o "$WORK/flame-inv.svg"
for f in "$WORK"/*.svg; do
    wellformed "$f"
    lacks "$f" "<img"
    has "$f" "/bin/evil &lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</text>"
done
for f in "$WORK"/flame-*.svg; do
    has "$f" "&lt;img src=x onerror=alert(3)&gt;.so+0x"
    # The only "</script>" closes the graph's own script.
    [ "$(grep -o '</script>' "$f" | wc -l)" = 1 ] || fail "$f: more than one </script>"
done

"$MEMSCRIBE" html "$T" -o "$WORK/evil.html"
lacks "$WORK/evil.html" "<img"
[ "$(grep -o '</script>' "$WORK/evil.html" | wc -l)" = 2 ] || fail "evil.html: a third </script>"
dump_dom "$WORK" "$WORK/dom.html" "$WORK/chrome.err" "$READY" "file://$WORK/evil.html" ||
    fail "chromium: $(tail -3 "$WORK/chrome.err")"
lines=$(console_lines "$WORK/chrome.err")
[ -z "$lines" ] || fail "the page wrote to the console: $lines"
python3 - "$WORK/dom.html" <<'EOF'
import sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.body = [], [], {}
        self.stack = []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "body":
            self.body = dict(attrs)
        for k, v in attrs:
            if k.startswith("on"):
                print(f"FAIL: an element <{tag}> has the handler {k}={v!r}", file=sys.stderr)
                sys.exit(1)
    def handle_data(self, d):
        self.text.append(d)

p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
text = "".join(p.text)
fails = []
bad = sorted(set(t for t in p.tags if t in ("img", "evilthread", "evilhost")))
if bad:
    fails.append("an element from the trace's strings is in the DOM: %s" % bad)
if p.body.get("data-ready") != "1":
    fails.append("the page's script did not finish")
if p.body.get("data-errors"):
    fails.append("script errors: " + p.body["data-errors"])
for s in ["/bin/evil </script><img src=x onerror=alert(1)>",  # header and summary
          "<evilthread>t</evilthread>&amp;",                   # thread name
          "<img src=x onerror=alert(3)>.so+0x",                 # frames in tables, flame graph
          "<evilhost>h</evilhost>"]:
    n = text.count(s)
    if n == 0:
        fails.append(f"the text {s!r} is not shown")
    else:
        print(f"ok: {s!r} shown as text {n} times")
if fails:
    print("\n".join("FAIL: " + f for f in fails), file=sys.stderr)
    sys.exit(1)
EOF
chrome "$WORK" --window-size=1280,1800 --screenshot="$ART/pic_escape.png" "file://$WORK/evil.html" \
    >/dev/null 2>&1
[ -s "$ART/pic_escape.png" ] || fail "no screenshot"
echo "PASS"
