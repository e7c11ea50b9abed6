#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The standard errors of a sampled trace's per-site estimates
# (docs/record-sampling.md, "Standard errors"), calibrated: col_sample_sites
# prints each call site's true allocations, bytes, leaked bytes and blocks
# (and its share of the peak is its bytes); recorded at --sample 64K with
# seeds 1 to 20, each site's five estimates (report --format csv) are held
# against the truth in units of their standard errors. As for a normal
# estimate, about 68 % are within one standard error (60-76 % asked) and
# at least 99 % within three. The seeds fix which blocks are sampled, so
# the counts repeat run to run. An exact trace's CSV has no "_se" column.
source "$(dirname "$0")/record_lib.sh"

P=$MS_PROGRAMS/col_sample_sites
"$P" >"$WORK/truth" || fail "col_sample_sites exited with $?"
for seed in $(seq 1 20); do
    MEMSCRIBE_SAMPLE_SEED=$seed "$MEMSCRIBE" record -q --sample 64K -o "$WORK/s$seed.mscr" -- "$P" \
        >/dev/null || fail "record (seed $seed) exited with $?"
    "$MEMSCRIBE" report --format csv --top 0 "$WORK/s$seed.mscr" >"$WORK/s$seed.csv" 2>/dev/null ||
        fail "report (seed $seed) exited with $?"
done
python3 - "$WORK" <<'PY' || fail "the standard errors are not calibrated (above)"
import csv, sys
work = sys.argv[1]
truth = {}
for line in open(f"{work}/truth"):
    name, allocs, nbytes, leaked, blocks = line.split()
    truth[name] = {"allocations": int(allocs), "allocated_bytes": int(nbytes),
                   "peak_bytes": int(nbytes), "leaked_bytes": int(leaked),
                   "leaked_blocks": int(blocks)}
z = []
for seed in range(1, 21):
    est = {}
    for row in csv.DictReader(open(f"{work}/s{seed}.csv")):
        fn = row["stack"].split(" ", 1)[0]
        if fn in truth:
            est[fn] = row
    for name, t in truth.items():
        for key, want in t.items():
            row = est.get(name)
            got = int(row[key]) if row else 0
            se = int(row[key + "_se"]) if row else 0
            z.append(abs(got - want) / se if se else (0.0 if got == want else float("inf")))
            if z[-1] > 3:
                print(f"seed {seed} {name} {key}: estimate {got}, truth {want}, standard error {se}")
n = len(z)
one = sum(x <= 1 for x in z) / n
three = sum(x <= 3 for x in z) / n
print(f"{n} estimates: {100 * one:.1f} % within 1 standard error, {100 * three:.1f} % within 3")
sys.exit(0 if 0.60 <= one <= 0.76 and three >= 0.99 else 1)
PY

"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$P" >/dev/null || fail "exact record failed"

# The page shows them (chromium renders it): each leaked row's standard
# errors are the CSV's, and the exact trace's page has none.
# shellcheck source=tests/e2e/html_chrome.sh
source "$(dirname "$0")/html_chrome.sh"
"$MEMSCRIBE" html -o "$WORK/s1.html" "$WORK/s1.mscr" 2>/dev/null || fail "html failed"
dump_dom "$WORK" "$WORK/s1.dom" "$WORK/chrome.err" "$READY" "file://$WORK/s1.html" ||
    fail "chromium exited with $?: $(tail -5 "$WORK/chrome.err")"
python3 - "$WORK/s1.dom" "$WORK/s1.csv" <<'PY' || fail "the page's standard errors are not the CSV's (above)"
import csv, re, sys
dom = open(sys.argv[1]).read()
want = {}
for row in csv.DictReader(open(sys.argv[2])):
    fn = row["stack"].split(" ", 1)[0]
    if fn.startswith("site_"):
        want[fn] = (row["leaked_bytes"], row["leaked_bytes_se"])
table = re.search(r'<table[^>]*id="leaks-table".*?</table>', dom, re.S).group(0)
seen = 0
for tr in re.findall(r'<tr class="row".*?</tr>', table, re.S):
    fn = re.search(r'\b(site_[0-9]+)\b', tr)
    cell = re.search(r'class="c-leaked_bytes"[^>]*>', tr)
    if not fn or not cell:
        continue
    v = re.search(r'data-v="([0-9]+)"', cell.group(0)).group(1)
    se = re.search(r'data-se="([0-9]+)"', cell.group(0))
    got = (v, se.group(1) if se else None)
    if got != want[fn.group(1)]:
        print(f"{fn.group(1)}: page {got}, CSV {want[fn.group(1)]}")
        sys.exit(1)
    seen += 1
print(f"{seen} leaked rows of the page hold the CSV's standard errors")
sys.exit(0 if seen >= 10 else 1)
PY
"$MEMSCRIBE" html -o "$WORK/exact.html" "$WORK/exact.mscr" 2>/dev/null || fail "html of the exact trace failed"
dump_dom "$WORK" "$WORK/exact.dom" "$WORK/chrome.err" "$READY" "file://$WORK/exact.html" ||
    fail "chromium exited with $?: $(tail -5 "$WORK/chrome.err")"
grep -q 'data-se=' "$WORK/exact.dom" && fail "the exact trace's page shows standard errors"

# The standard errors in text (±) and the exact trace without them.
"$MEMSCRIBE" report --top 3 "$WORK/s1.mscr" >"$WORK/s1.txt" 2>&1 || fail "report text failed"
grep -q '~[0-9]*±[0-9.]*%' "$WORK/s1.txt" || fail "no ± in the text: $(sed -n 12,16p "$WORK/s1.txt")"
"$MEMSCRIBE" report --format csv --top 0 "$WORK/exact.mscr" >"$WORK/exact.csv" 2>/dev/null
head -1 "$WORK/exact.csv" | grep -q _se && fail "an exact trace's CSV has _se columns: $(head -1 "$WORK/exact.csv")"
"$MEMSCRIBE" report --top 3 "$WORK/exact.mscr" | grep -q '±' && fail "an exact trace's text has ±"
echo "ok: standard errors calibrated over 20 seeds, the same in CSV, text and the page"
