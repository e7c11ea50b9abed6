#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rows that reach the user's code (issue 59, item 2; docs/symbols.md, "The
# frame of interest"), on three recordings:
# - tests/programs/ana_interest.cc fills a std::map from load_catalog() and
#   a std::unordered_map from load_names(): every row of `report --top 4`
#   whose stack holds either names it in the frames it prints, and its JSON
#   "interest" is that frame (before: six std:: frames and "... 5 more");
# - that program and ana_threads (three threads): no text row of report,
#   leaks, window, tree, vmem, check or top holds libc's start-up or thread
#   start (__libc_start, start_thread, clone3); --all-frames still shows
#   them; `tree` starts at main and at the threads' functions;
# - `make -j2` of a small generated C project: rows of report's tables
#   whose frames of interest differ, differ within their first 60
#   characters (before: a build's rows began `xmalloc
#   (libbfd-2.40-system.so) < x86_64-linux-gnu-ld.bfd+0x...` alike), and no
#   row holds libc's start-up, not even a stripped program's (as, the gcc
#   driver: `... < __libc_start_main < as+0x6d131`, its nameless _start);
#   its compile commands keep their source files' names in the process
#   table (before: `cc -O2 -g -I. ... -c ...` cut at 60 characters);
# - a perl script: rows start at the function that asked perl's Newx
#   (Perl_sv_grow), not at Perl_safesysmalloc.
# Needs MEMSCRIBE, MS_PROGRAMS, MS_SOURCE; make, cc and perl.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
ROWS="python3 $MS_SOURCE/tests/e2e/ana_interest_rows.py"
command -v make >/dev/null && command -v cc >/dev/null || fail "make and cc are needed"

# The C++ program's container rows.
record ana_interest
mv "$WORK/t.mscr" "$WORK/cxx.mscr"
run 0 report --top 4 "$WORK/cxx.mscr"
mv "$WORK/out" "$WORK/cxx.txt"
run 0 report --top 4 --format=json "$WORK/cxx.mscr"
mv "$WORK/out" "$WORK/cxx.json"
$ROWS "$WORK/cxx.txt" "$WORK/cxx.json" names load_catalog load_names ||
    fail "report's rows of the containers do not name load_catalog or load_names (above)"
n=$(grep -c '\[[0-9]* library frames\] < (anonymous namespace)::load_catalog()' "$WORK/cxx.txt")
[ "$n" -ge 2 ] || fail "the std:: frames before load_catalog() fold into one mark: $n rows"
# The user's own allocation wrappers (--alloc-fn, MEMSCRIBE_ALLOC_FNS): the
# row names the frame below them, main.
for how in "--alloc-fn (anonymous namespace)::load_catalog" "env"; do
    if [ "$how" = env ]; then
        MEMSCRIBE_ALLOC_FNS="other_fn,(anonymous namespace)::load_catalog" \
            "$MEMSCRIBE" report --top 4 --format=json "$WORK/cxx.mscr" >"$WORK/wrap.json"
    else
        "$MEMSCRIBE" report --top 4 --format=json --alloc-fn "(anonymous namespace)::load_catalog" \
            "$WORK/cxx.mscr" >"$WORK/wrap.json"
    fi
    got=$(jq -r '[.processes[0].top[][] | select(.stack | any(test("load_catalog"))) |
                  .stack[.interest] | sub(" \\(.*"; "")] | unique | join(",")' "$WORK/wrap.json")
    expect "$how: the frame of interest of load_catalog's rows" "$got" "main"
done

# No start-up in any command's rows; --all-frames shows it.
record ana_threads
mv "$WORK/t.mscr" "$WORK/threads.mscr"
for t in cxx threads; do
    for cmd in "report --top 0" "leaks --all" "leaks" "window --top 0" "window --tree" \
               "tree --depth 0" "tree --bottom-up --depth 0" "vmem --top 0" \
               "check --max-leaked 0" "top --once"; do
        # check fails (exit 1) and lists the leaks it counted
        # shellcheck disable=SC2086
        "$MEMSCRIBE" $cmd "$WORK/$t.mscr" >"$WORK/out" 2>"$WORK/err" || [ "$cmd" = "check --max-leaked 0" ] ||
            fail "$cmd $t: exit $?: $(cat "$WORK/err")"
        if grep -E '__libc_start|start_thread|clone3|_dl_start_user' "$WORK/out" >"$WORK/hits"; then
            fail "$cmd ($t): rows hold the start-up: $(head -3 "$WORK/hits")"
        fi
    done
done
run 0 report --top 0 --all-frames "$WORK/cxx.mscr"
grep -q '__libc_start_call_main' "$WORK/out" || fail "report --all-frames: no __libc_start_call_main"
run 0 tree --depth 1 --top 0 "$WORK/threads.mscr"
roots=$(awk '/function$/ { on = 1; next } on && !NF { exit } on { print $NF }' "$WORK/out" | sort | tr '\n' ' ')
expect "tree's roots (main and the threads' functions)" "$roots" "leaker main maker "
echo "ok: no start-up in the rows of report, leaks, window, tree, vmem, check, top"

# A make of a small C project, its compiles' flags long.
P=$WORK/proj
mkdir -p "$P/src" "$P/include"
echo '#define PROJECT_SCALE 3' >"$P/include/project.h"
for i in 1 2 3 4 5; do
    cat >"$P/src/module_$i.c" <<EOC
#include "project.h"
int module_$i(int x);
int module_$i(int x) { int a[$((i * 16))] = {0}; for (int k = 0; k < $((i * 16)); k++) a[k] = x * k; return a[$i] * PROJECT_SCALE; }
EOC
done
cat >"$P/src/main.c" <<'EOC'
#include <stdio.h>
int module_1(int), module_2(int), module_3(int), module_4(int), module_5(int);
int main(void) { printf("%d\n", module_1(1) + module_2(2) + module_3(3) + module_4(4) + module_5(5)); return 0; }
EOC
cat >"$P/Makefile" <<'EOC'
CFLAGS = -O2 -g -I. -Iinclude -DPROJECT_NAME=interest -Wall -Wextra -Wshadow -Wstrict-prototypes
OBJS = build/main.o build/module_1.o build/module_2.o build/module_3.o build/module_4.o build/module_5.o
build/prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
build/%.o: src/%.c include/project.h
	@mkdir -p build
	$(CC) $(CFLAGS) -c $< -o $@
EOC
(cd "$P" && "$MEMSCRIBE" record -q -o "$WORK/make.mscr" -- make -j2 >"$WORK/make.out" 2>"$WORK/make.err") ||
    fail "record make -j2: $(tail -5 "$WORK/make.err")"
run 0 report --top 10 "$WORK/make.mscr"
mv "$WORK/out" "$WORK/make.txt"
run 0 report --top 10 --format=json "$WORK/make.mscr"
mv "$WORK/out" "$WORK/make.json"
$ROWS "$WORK/make.txt" "$WORK/make.json" early 60 ||
    fail "the build's rows do not differ within their first 60 characters (above)"
$ROWS "$WORK/make.txt" "$WORK/make.json" argv || fail "the compiles' commands lost their files (above)"
for cmd in "report --top 0" "leaks" "tree --depth 6"; do
    # shellcheck disable=SC2086
    "$MEMSCRIBE" $cmd "$WORK/make.mscr" >"$WORK/out" 2>"$WORK/err" || fail "$cmd make: $(cat "$WORK/err")"
    if grep -E '__libc_start|start_thread|clone3' "$WORK/out" >"$WORK/hits"; then
        fail "$cmd (make): rows hold the start-up: $(head -3 "$WORK/hits")"
    fi
done

# A perl script: its rows start at the interpreter's function that asked
# perl's Newx for memory (Perl_sv_grow, Perl_more_sv...), never at the
# wrapper itself, as xmalloc is cut.
# shellcheck disable=SC2016 # perl's own $ variables
"$MEMSCRIBE" record -q -o "$WORK/perl.mscr" -- perl -e 'my %h; $h{$_} = "x" x 100 for 1 .. 20000' \
    >/dev/null 2>"$WORK/err" || fail "record perl: $(cat "$WORK/err")"
run 0 report --top 10 "$WORK/perl.mscr"
grep -q 'Perl_sv_grow (perl)' "$WORK/out" || fail "perl: no row names Perl_sv_grow: $(grep -m3 '(perl)' "$WORK/out")"
if grep -E 'Perl_safesys' "$WORK/out" >"$WORK/hits"; then
    fail "perl: rows hold perl's allocation wrapper: $(head -3 "$WORK/hits")"
fi
echo "PASS"
