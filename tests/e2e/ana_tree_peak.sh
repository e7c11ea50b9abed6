#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A process tree's peak is the peak of the sum of its live processes: a
# process's heap leaves every total at its exit (its blocks stay its
# leaks). tests/programs/ana_hog.c takes exactly 50 MiB and exits without
# freeing. Three run one after another under sh: the tree's peak is one
# hog's 50 MiB plus what the shells held then, not 150 MiB (memscribe
# once said 150); two at once: 100 MiB plus the shells'. The others'
# share (sh, sleep) is measured exactly from the dump by an independent
# replay that keys processes by pid (an exec ends the image it replaces
# with an exit). The sleeps between the runs keep the processes well apart
# (exits are dated when they began, tests/e2e/ana_exits.sh).
# The heaptrack export follows the same tree peak, read by heaptrack_print;
# pprof's, written per process, has the whole model's samples.
# Needs MEMSCRIBE, MS_PROGRAMS, heaptrack_print.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
HOG=$MS_PROGRAMS/ana_hog
MIB50=52428800

# From the dump: the highest sum of live processes' heap, and at that
# event how much of it the hog processes held (the rest: sh and sleep).
replay() {
    "$MEMSCRIBE" dump "$1" | awk -v hog="$HOG" '
    function sub_ref(line, pid,   m) {
        if (match(line, / ends=#[0-9]+/)) {
            m = substr(line, RSTART + 7, RLENGTH - 7)
            heap[pid] -= sz[m]
            if (!(pid in gone)) live -= sz[m]
        }
    }
    $5 == "process_start" { delete gone[$2]; heap[$2] = 0
        ishog[$2] = index($0, "exe=\"" hog "\"") > 0 }
    $5 == "process_exit" { if (!(($2) in gone)) { live -= heap[$2]; gone[$2] = 1 } }
    $5 ~ /^(malloc|calloc|realloc|reallocarray|free|memalign|posix_memalign|aligned_alloc|valloc|pvalloc)$/ {
        sub_ref($0, $2)
        if ($4 ~ /^#/ && match($0, / size=[0-9]+/)) {
            s = substr($0, RSTART + 6, RLENGTH - 6); sz[substr($4, 2)] = s
            heap[$2] += s; if (!(($2) in gone)) live += s
        }
        if (live > peak) {
            peak = live; hogs = 0
            for (p in heap) if (!(p in gone) && ishog[p]) hogs += heap[p]
        }
    }
    END { print peak, hogs, peak - hogs }'
}

check() { # name trace hogs-at-once
    local name=$1 t=$2 n=$3 peak hogs others
    read -r peak hogs others < <(replay "$t")
    expect "$name: hogs' heap at the peak" "$hogs" $((n * MIB50))
    "$MEMSCRIBE" report --format=json --top 0 "$t" >"$WORK/$name.json"
    expect "$name: tree peak" "$(jq '.total.peak_bytes' "$WORK/$name.json")" "$peak"
    # The shells hold little: the peak is not one more hog's worth.
    [ "$others" -lt 1048576 ] || fail "$name: the others held $others bytes at the peak"
    echo "ok: $name: sh and sleep held $others bytes at the peak"
    # Every hog keeps its 50 MiB as its leak, and the total its sum.
    expect "$name: each hog's leak" \
        "$(jq "[.processes[] | select(.leaked_bytes >= $MIB50) | .leaked_bytes] | unique" \
            "$WORK/$name.json" | tr -d ' \n')" "[$MIB50]"
    expect "$name: total leaked" "$(jq '.total.leaked_bytes' "$WORK/$name.json")" \
        "$(jq '[.processes[].leaked_bytes] | add' "$WORK/$name.json")"
    # The per-program view's rows are folded at each process's end (bounded
    # memory on trees): they read as those of the whole model, and the
    # tree's first site by peak is the hogs' that were live at the peak.
    local cmd
    for cmd in report leaks "leaks --format=json" "report --frames 2 --top 3" \
        "report --format=json" "report --format=json --top 1 --no-default-suppressions" \
        "flamegraph --folded" "flamegraph --folded --cost peak --inverted" "flamegraph -o -" \
        timeline "window --tree" "window --tree --bottom-up --top 0" tree "tree --bottom-up --top 0" \
        vmem "vmem --format=json --by function --rows 0" frag "frag --format=json --granularity 4K --top 0" \
        "diff --sort leaked $t" "diff --lines --from 1ms --top 0 $t" "vmem --exe ana_hog" \
        "report --format=csv" "report --format=csv --top 0" "timeline --sites 3" \
        "timeline --sites 3 --site-cost allocations" "timeline --sites 2 --format=json --site-cost temporary" \
        "timeline --sites 2 --format=json --from 1ms" "report --by-process" \
        "report --by-process --format=json --top 2" "report --exe ana_hog" "leaks --exe ana_hog" \
        "tree --exe ana_hog" "leaks --by-process" "leaks --by-process --format=json --top 1" \
        "leaks --all --top 2" "leaks --all --format=json --top 5" "window --index" \
        "window --index --by function --format=json" "window --index --tree --from 1ms"; do
        # shellcheck disable=SC2086 # the command's words
        MEMSCRIBE_FOLD=always "$MEMSCRIBE" $cmd "$t" >"$WORK/fold.out" || fail "$name: $cmd"
        # shellcheck disable=SC2086
        MEMSCRIBE_FOLD=0 "$MEMSCRIBE" $cmd "$t" >"$WORK/whole.out" || fail "$name: $cmd (whole)"
        cmp -s "$WORK/fold.out" "$WORK/whole.out" ||
            fail "$name: $cmd: folded rows differ: $(diff "$WORK/whole.out" "$WORK/fold.out" | head -5)"
    done
    # check's gate (failing, so that it lists the leaks) folds its rows too.
    for cmd in "check --max-leaked 0" "check --max-leaked 0 --format=json --top 0" \
        "check --max-leaked 0 --exe ana_hog"; do
        # shellcheck disable=SC2086 # the command's words
        MEMSCRIBE_FOLD=always "$MEMSCRIBE" $cmd "$t" >"$WORK/fold.out" && fail "$name: $cmd passed"
        # shellcheck disable=SC2086
        MEMSCRIBE_FOLD=0 "$MEMSCRIBE" $cmd "$t" >"$WORK/whole.out" && fail "$name: $cmd passed (whole)"
        cmp -s "$WORK/fold.out" "$WORK/whole.out" ||
            fail "$name: $cmd: folded rows differ: $(diff "$WORK/whole.out" "$WORK/fold.out" | head -5)"
    done
    # The page folds its rows too: the same data, its window cells finer
    # at most (html_same.py).
    local sel
    for sel in "" "--exe ana_hog"; do
        # shellcheck disable=SC2086 # the option's words
        MEMSCRIBE_FOLD=always "$MEMSCRIBE" html -o "$WORK/fold.html" $sel "$t" || fail "$name: html $sel"
        # shellcheck disable=SC2086
        MEMSCRIBE_FOLD=0 "$MEMSCRIBE" html -o "$WORK/whole.html" $sel "$t" ||
            fail "$name: html $sel (whole)"
        python3 "$(dirname "$0")/html_same.py" "$WORK/fold.html" "$WORK/whole.html" ||
            fail "$name: html $sel: the folded page differs"
    done
    # pprof writes each process's samples at its end and lets its stacks
    # go (bounded memory on trees): the same samples as from the whole
    # model (pprof_samples.py: by value and frames, whatever their order
    # and ids), in another order of fields (the duration comes last).
    "$MEMSCRIBE" export --to pprof -o "$WORK/fold.pb.gz" "$t" || fail "$name: export --to pprof"
    MEMSCRIBE_FOLD=0 "$MEMSCRIBE" export --to pprof -o "$WORK/whole.pb.gz" "$t" ||
        fail "$name: export --to pprof (whole)"
    ! cmp -s "$WORK/fold.pb.gz" "$WORK/whole.pb.gz" || fail "$name: pprof: not written per process"
    python3 "$(dirname "$0")/pprof_samples.py" "$WORK/fold.pb.gz" >"$WORK/fold.pp"
    python3 "$(dirname "$0")/pprof_samples.py" "$WORK/whole.pb.gz" >"$WORK/whole.pp"
    cmp -s "$WORK/fold.pp" "$WORK/whole.pp" ||
        fail "$name: pprof: samples differ: $(diff "$WORK/whole.pp" "$WORK/fold.pp" | head -5)"
    [ "$(grep -c '^sample' "$WORK/fold.pp")" -gt 10 ] || fail "$name: pprof: few samples"
    echo "ok: $name: pprof per process: $(grep -c '^sample' "$WORK/fold.pp") samples as the whole model's"
    "$MEMSCRIBE" report "$t" >"$WORK/$name.txt"
    expect "$name: the tree's first site by peak" "$(awk '/^  top call sites by peak/ { getline; getline; print $1; exit }' "$WORK/$name.txt")" \
        $((n * MIB50))
    # heaptrack's one stream follows the tree's heap: an ended process's
    # blocks leave it before the next allocation, so its peak is the tree's
    # to the byte (main: every hog's 50 MiB stayed, 150 MiB in sequence).
    "$MEMSCRIBE" export --to heaptrack -o "$WORK/$name.heaptrack.txt" "$t" ||
        fail "$name: export --to heaptrack"
    expect "$name: heaptrack stream's peak" "$(ht_peak "$WORK/$name.heaptrack.txt")" "$peak"
    heaptrack_print "$WORK/$name.heaptrack.txt" >"$WORK/ht.out" 2>"$WORK/ht.err" ||
        fail "$name: heaptrack_print failed"
    [ ! -s "$WORK/ht.err" ] || fail "$name: heaptrack_print complained: $(head -3 "$WORK/ht.err")"
    expect "$name: heaptrack_print's peak" \
        "$(sed -n 's/^peak heap memory consumption: //p' "$WORK/ht.out")" "$(mega "$peak")"
}

# The highest running sum of a heaptrack data file's "+" and "-" lines.
ht_peak() {
    python3 -c 'import sys
size, heap, peak = [], 0, 0
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "a":
        size.append(int(w[1], 16))
    elif w[0] in "+-":
        heap += size[int(w[1], 16)] * (1 if w[0] == "+" else -1)
        peak = max(peak, heap)
print(peak)' "$1"
}

# heaptrack_print's formatBytes for bytes above 1 MB: M with 2 decimals.
mega() {
    awk -v b="$1" 'BEGIN { printf "%.2fM", b / 1000000 }'
}

"$MEMSCRIBE" record -o "$WORK/seq.mscr" -- sh -c "'$HOG'; sleep 0.5; '$HOG'; sleep 0.5; '$HOG'" >/dev/null 2>"$WORK/err" ||
    fail "record (in sequence): $(cat "$WORK/err")"
check seq "$WORK/seq.mscr" 1
S=$WORK/seq.json

# The process table opens the report: every process image, the hogs with
# their own peak and leak and an end (their exit).
expect "seq: process table rows" "$(jq '.process_table | length' "$S")" \
    "$(jq '.processes | length' "$S")"
expect "seq: hogs in the table" "$(jq "[.process_table[] | select(.exe == \"$HOG\")] | length" "$S")" 3
expect "seq: hogs' peak and leak" "$(jq -c "[.process_table[] | select(.exe == \"$HOG\") |
    [.peak_bytes, .leaked_bytes, (.end_ns != null), (.ppid == .pid | not)]] | unique" "$S")" \
    "[[$MIB50,$MIB50,true,true]]"
# The per-program view (three processes of one executable): the text opens
# with the tree's part (after the trace's notes), then the programs table;
# the process table comes last. --by-process opens with the table, a part
# per process.
"$MEMSCRIBE" report "$WORK/seq.mscr" >"$WORK/seq.txt"
expect "seq: the text opens with the tree" \
    "$(awk 'NR > 2 && /^[^ ]/ && !/^note: / { print; exit }' "$WORK/seq.txt")" "all processes"
progs=$(grep -m1 -n '^programs (' "$WORK/seq.txt" | cut -d: -f1)
title=$(grep -m1 -n '^processes (end: exit or exec' "$WORK/seq.txt" | cut -d: -f1)
first=$(grep -m1 -n '^pid ' "$WORK/seq.txt" | cut -d: -f1)
[ -n "$progs" ] && [ "$progs" -lt "$first" ] && [ "$first" -lt "$title" ] ||
    fail "seq: not tree, programs, parts, process table (lines $progs, $first, $title)"
expect "seq: the hogs' program row" \
    "$(sed -n "$((progs + 2)),$((first - 2))p" "$WORK/seq.txt" | awk -v h="$HOG" '$NF == h { print $1, $2, $3 }')" \
    "3 $MIB50 $((3 * MIB50))"
grep -qx "$HOG (3 processes)" "$WORK/seq.txt" || fail "seq: no part for the hogs' program"
expect "seq: text table rows" "$(sed -n "$((title + 2)),\$p" "$WORK/seq.txt" | awk -v h="$HOG" '$7 == h' | wc -l)" 3
"$MEMSCRIBE" report --by-process "$WORK/seq.mscr" >"$WORK/seqp.txt"
title=$(grep -m1 -n '^processes (end: exit or exec' "$WORK/seqp.txt" | cut -d: -f1)
first=$(grep -m1 -n '^pid ' "$WORK/seqp.txt" | cut -d: -f1)
[ -n "$title" ] && [ "$title" -lt "$first" ] || fail "seq --by-process: the text does not open with the table"
expect "seq --by-process: parts" "$(grep -c '^pid ' "$WORK/seqp.txt")" "$(jq '.processes | length' "$S")"
# JSON: the program's numbers, and its call site: one row for the three
# processes' (their stacks read the same), leaking all three blocks.
H=".programs[] | select(.exe == \"$HOG\")"
expect "seq: program in JSON" "$(jq -c "$H | [.processes, (.images | length), .peak_bytes, .leaked_bytes, .allocations >= 3]" "$S")" \
    "[3,3,$MIB50,$((3 * MIB50)),true]"
expect "seq: program's site merged" "$(jq -c "$H | .top.leaked[0] | [.leaked_bytes, .leaked_blocks]" "$S")" \
    "[$((3 * MIB50)),3]"
expect "seq: tree's site merged" "$(jq -c '.total.top.leaked[0] | [.leaked_bytes, .leaked_blocks]' "$S")" \
    "[$((3 * MIB50)),3]"

# Peak RSS of the tree sums the running processes' latest samples: two hogs
# never ran at once (each takes over 50 MiB resident).
rss=$(jq '.total.peak_rss_bytes' "$S")
[ "$rss" != null ] && [ "$rss" -lt $((2 * MIB50)) ] || fail "seq: tree peak RSS $rss, want below 100 MiB"
echo "ok: seq: tree peak RSS $rss below 100 MiB"

# timeline: a hog's rows stop at its exit (main kept its 50 MiB to the end).
"$MEMSCRIBE" timeline --format=csv "$WORK/seq.mscr" >"$WORK/tl.csv"
jq -r ".process_table[] | select(.exe == \"$HOG\") | \"\(.pid) \(.end_ns)\"" "$S" |
    while read -r pid end; do
        # The time as the text it is: mawk prints a number past 2^31 as
        # 2.14783e+09 (and printf %d stops at 2^31 - 1).
        last=$(awk -F, -v p="$pid" 'NR > 1 && $1 == p { t = $3 } END { print (t == "" ? 0 : t) }' "$WORK/tl.csv")
        [ "$last" -le "$end" ] || fail "timeline: pid $pid has a row at $last ns, after its exit at $end"
        echo "ok: timeline: pid $pid's last row ($last ns) is not after its exit ($end ns)"
    done

# --exe selects process images by executable name or glob: the hogs alone
# peak at exactly one hog.
"$MEMSCRIBE" report --format=json --top 0 --exe ana_hog "$WORK/seq.mscr" >"$WORK/exe.json"
expect "--exe ana_hog: processes" "$(jq '.processes | length' "$WORK/exe.json")" 3
expect "--exe ana_hog: tree peak" "$(jq '.total.peak_bytes' "$WORK/exe.json")" $MIB50
expect "--exe ana_hog: leaked" "$(jq '.total.leaked_bytes' "$WORK/exe.json")" $((3 * MIB50))
"$MEMSCRIBE" report --format=json --top 0 --exe '*/ana_h?g' "$WORK/seq.mscr" >"$WORK/glob.json"
expect "--exe glob on the path" "$(jq -c '[.processes[].pid]' "$WORK/glob.json")" \
    "$(jq -c '[.processes[].pid]' "$WORK/exe.json")"
"$MEMSCRIBE" leaks --format=json --top 0 --exe 'ana_*' "$WORK/seq.mscr" >"$WORK/leaks.json"
expect "leaks --exe: bytes" "$(jq '[.stacks[].leaked_bytes] | add' "$WORK/leaks.json")" $((3 * MIB50))
# The flame graph puts each program under a frame of its own.
expect "flamegraph: the hogs' program" "$("$MEMSCRIBE" flamegraph --folded "$WORK/seq.mscr" |
    grep '^ana_hog (3 processes);' | sed 's/;.*;/;...;/')" "ana_hog (3 processes);...;main $((3 * MIB50))"
# leaks merges the program's processes too: one row of three blocks.
"$MEMSCRIBE" leaks --format=json --top 0 "$WORK/seq.mscr" >"$WORK/leaks.json"
expect "leaks: the hogs' row" "$(jq -c "[.stacks[] | select(.exe == \"$HOG\") | [.leaked_bytes, .leaked_blocks]]" \
    "$WORK/leaks.json")" "[[$((3 * MIB50)),3]]"
expect "leaks: the hogs' program" "$(jq -c ".programs[] | select(.exe == \"$HOG\") | [.processes, .leaked_bytes]" \
    "$WORK/leaks.json")" "[3,$((3 * MIB50))]"
rc=0
"$MEMSCRIBE" report --exe no-such-program "$WORK/seq.mscr" >/dev/null 2>"$WORK/err" || rc=$?
expect "--exe matching nothing: exit" "$rc" 1
expect "--exe matching nothing: message" "$(cat "$WORK/err")" \
    "memscribe: report: $WORK/seq.mscr: no process of --exe is in the trace"
# Both hogs hold their block until the other has its own.
"$MEMSCRIBE" record -o "$WORK/par.mscr" -- \
    sh -c "'$HOG' '$WORK/a' '$WORK/b' & '$HOG' '$WORK/b' '$WORK/a'; wait" >/dev/null 2>"$WORK/err" ||
    fail "record (at once): $(cat "$WORK/err")"
check par "$WORK/par.mscr" 2
# Two at once: the program's peak is both hogs' heaps (each hog's own
# peak is one block), and its site's share at that peak both blocks.
H=".programs[] | select(.exe == \"$HOG\")"
expect "par: program's peak" "$(jq "$H | .peak_bytes" "$WORK/par.json")" $((2 * MIB50))
expect "par: program's site at its peak" "$(jq "$H | .top.peak[0].peak_bytes" "$WORK/par.json")" $((2 * MIB50))
echo "PASS"
