#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real programs nobody here wrote run traced exactly as they run untraced:
# same exit status, same output, same files written, under `record`, under
# `record --reach` (each process stopped at its exit for the scan of its
# leaks, docs/leaks.md) and under the no-wrapper mode (LD_PRELOAD +
# MEMSCRIBE_OUTPUT). The zoo: ar,
# nm and ranlib with the LLVM gold plugin installed (it pulls libLLVM and
# libstdc++ into a C program after it started), objdump, `make -j2` of a
# small C project that builds a static library, python3 importing a C++
# library through ctypes, perl, git, sqlite3, g++ (a C driver running the
# C++ cc1plus), and the C host with its C++ plugin. Each trace must read
# whole and hold the program's allocations. (The attach to the C host
# while it loads its plugin is in record_late_cxx.sh.)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh" --go-on zoo MEMSCRIBE MS_PROGRAMS MS_BUILD
COL=$MS_BUILD/lib/memscribe/libmemscribe.so
for tool in ar nm ranlib objdump make /usr/bin/python3 perl git sqlite3 g++ cc; do need "$tool"; done
gold=/usr/lib/bfd-plugins/LLVMgold-14.so
[ -e "$gold" ] || fail "$gold is missing: scripts/setup.sh --test installs clang, which brings it"

# The inputs every run starts from, in $WORK/src.
mkdir "$WORK/src"
cd "$WORK/src" || exit 1
for i in 1 2 3 4 5 6; do
    printf '#include <stdlib.h>\nint f%d(int x) { char *p = malloc(100 + x); int r = p ? x * %d : 0; free(p); return r; }\n' \
        "$i" "$i" >"f$i.c"
done
printf 'int f1(int); int f6(int);\nint main(void) { return f1(2) + f6(1) == 8 ? 0 : 1; }\n' >main.c
cat >Makefile <<'MK'
OBJS = f1.o f2.o f3.o f4.o f5.o f6.o
prog: main.o libf.a
	cc -o $@ main.o libf.a
libf.a: $(OBJS)
	ar rcs $@ $(OBJS)
%.o: %.c
	cc -O1 -c $< -o $@
MK
cc -c f1.c -o f1.o && cc -c f2.c -o f2.o && ar rcs lib.a f1.o f2.o
cat >cxx.cc <<'CC'
#include <map>
#include <stdexcept>
#include <string>
#include <vector>
extern "C" long cxx_work(int n)
{
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < n; i++)
        m[std::to_string(i % 97)].push_back(i);
    long sum = 0;
    for (auto &kv : m)
        sum += kv.first.size() * kv.second.size();
    try {
        throw std::runtime_error(std::string(200, 'x'));
    } catch (const std::exception &e) {
        sum += std::string(e.what()).size();
    }
    return sum;
}
CC
g++ -O1 -shared -fPIC -o libcxx.so cxx.cc
printf 'import ctypes\nlib = ctypes.CDLL("./libcxx.so")\nprint(lib.cxx_work(20000))\n' >ctypes_cxx.py
printf 'namespace { struct S { int v[8]; }; }\nint g(S *s) { return s->v[3]; }\n' >prog.cc
git init -q repo && cp f1.c f2.c repo/

# Each case: NAME, then the command, run in a fresh copy of src/ (each
# output file it names is compared after the run too: "=FILE" arguments
# before the command). Its stdout, stderr and exit status, and those
# files, must be the same untraced, under record and without the wrapper.
export GIT_AUTHOR_NAME=zoo GIT_AUTHOR_EMAIL=zoo@example.org GIT_COMMITTER_NAME=zoo \
    GIT_COMMITTER_EMAIL=zoo@example.org GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' \
    GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' GIT_CONFIG_NOSYSTEM=1 HOME=$WORK
zoo_run() { # MODE DIR CMD...: run CMD in DIR as MODE says, output in DIR.out
    local mode=$1 dir=$2
    shift 2
    rm -rf "$dir" && cp -a "$WORK/src" "$dir"
    local rc=0
    case $mode in
    plain) (cd "$dir" && "$@") >"$dir.out" 2>"$dir.err" || rc=$? ;;
    record) (cd "$dir" && "$MEMSCRIBE" record -q -o "$dir.mscr" -- "$@") >"$dir.out" 2>"$dir.err" || rc=$? ;;
    reach) (cd "$dir" && "$MEMSCRIBE" record -q --reach -o "$dir.mscr" -- "$@") >"$dir.out" 2>"$dir.err" || rc=$? ;;
    nowrap) (cd "$dir" && LD_PRELOAD=$COL MEMSCRIBE_OUTPUT=$dir.mscr "$@") >"$dir.out" 2>"$dir.err" || rc=$? ;;
    esac
    echo "$rc" >"$dir.rc"
}
zoo_case() {
    local name=$1 files=() sort=0
    shift
    while [ "${1:0:1}" = = ]; do
        if [ "$1" = =sorted ]; then sort=1; else files+=("${1#=}"); fi
        shift
    done
    local base=$WORK/$name failed_before=$fails
    zoo_run plain "$base.plain" "$@"
    for mode in record reach nowrap; do
        zoo_run "$mode" "$base.$mode" "$@"
        cmp -s "$base.plain.rc" "$base.$mode.rc" ||
            fail "$name ($mode): exit status $(cat "$base.$mode.rc"), untraced $(cat "$base.plain.rc"): $(head -c 600 "$base.$mode.err")"
        for stream in out err; do
            if [ "$sort" = 1 ]; then
                cmp -s <(sort "$base.plain.$stream") <(sort "$base.$mode.$stream") ||
                    fail "$name ($mode): its std$stream differs (as sorted lines)"
            else
                cmp -s "$base.plain.$stream" "$base.$mode.$stream" ||
                    fail "$name ($mode): its std$stream differs: $(diff "$base.plain.$stream" "$base.$mode.$stream" | head -5)"
            fi
        done
        for f in "${files[@]}"; do
            cmp -s "$base.plain/$f" "$base.$mode/$f" || fail "$name ($mode): $f differs"
        done
        # The recorder of the no-wrapper mode finishes after the program: the
        # trace is read until it says it is complete (report's JSON says so;
        # its notes are not on stderr), 30 s at most.
        local ok=0
        for _ in $(seq 1 300); do
            if "$MEMSCRIBE" report --format=json "$base.$mode.mscr" >"$base.$mode.json" 2>"$base.$mode.rerr" &&
                [ ! -s "$base.$mode.rerr" ] && [ "$(jq .incomplete "$base.$mode.json")" = false ]; then
                ok=1
                break
            fi
            sleep 0.1
        done
        [ "$ok" = 1 ] || fail "$name ($mode): report of the trace failed: $(head -c 300 "$base.$mode.rerr")"
        local allocs lost
        allocs=$(jq '.total.allocations' "$base.$mode.json")
        lost=$(jq '[.incomplete, .dropped_events] | tostring' "$base.$mode.json")
        [ "${allocs:-0}" -gt 0 ] || fail "$name ($mode): the trace holds no allocation"
        [ "$lost" = '"[false,0]"' ] || fail "$name ($mode): the trace is incomplete or dropped events: $lost"
        # --reach: every process stopped a moment at its exit and classed.
        [ "$mode" != reach ] || [ "$(jq '.total | has("lost_bytes")' "$base.$mode.json")" = true ] ||
            fail "$name ($mode): no leak classes in the trace"
    done
    [ "$fails" != "$failed_before" ] || echo "ok: $name"
}

zoo_case ar =lib2.a ar rcs lib2.a f1.o f2.o
zoo_case nm nm lib.a
zoo_case ranlib =lib.a ranlib lib.a
zoo_case objdump objdump -d f1.o
zoo_case make =sorted make -j2 -s prog
zoo_case python3 /usr/bin/python3 ctypes_cxx.py
# shellcheck disable=SC2016 # perl's own $ variables
zoo_case perl perl -e 'my %h; $h{$_} = "v" x ($_ % 50) for 1 .. 20000; my $n = 0; $n += length $h{$_} for keys %h; print scalar(keys %h), " $n\n"'
zoo_case git sh -c 'cd repo && git add f1.c f2.c && git commit -q -m one && git log --format=%H%n%s -p'
zoo_case sqlite3 sqlite3 :memory: 'create table t(a integer, b text); with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000) insert into t select x, hex(x * 7919) from c; create index i on t(b); select count(*), sum(a), max(b) from t;'
zoo_case g++ =prog.o g++ -O1 -c prog.cc -o prog.o
zoo_case cxx_host "$MS_PROGRAMS/col_cxx_host" "$MS_PROGRAMS/libcol_cxx_plug.so"
finish "ok: the zoo ran traced as untraced, under record, record --reach and without the wrapper"
