#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector's unwinder against libunwind on real programs: under
# MEMSCRIBE_UNWIND=verify every walk is compared with a full unw_backtrace
# from the same place and a difference aborts the program with both stacks
# printed. sqlite3 on a generated script, python3 with PYTHONMALLOC=malloc,
# perl building and sorting a hash, git making a repository, committing and
# packing it, gcc's cc1 -O2 on libpng's pngtest.c (2,158 lines, png.h and
# zlib.h included), and col_unwind (C++ exceptions, longjmp and siglongjmp out of
# allocating frames, allocations in signal handlers on an alternate stack,
# recursion past the walks' maximum, 8 threads) at -O0 with frame pointers
# and at -O2 without; col_unwind and sqlite3 also with 6 frames a stack.
#
# usage: unwind_verify.sh [small]: small, a tenth of each workload and no
# cc1, for a CPU every instruction of which is emulated (the arm64 subset,
# scripts/cross-check.sh): every kind of stack still, far fewer of them.
source "$(dirname "$0")/record_lib.sh"
export MEMSCRIBE_UNWIND=verify

# usage: verified NAME MIN_ALLOCS COMMAND...: the program exits 0, nothing
# differed, and its trace holds at least MIN_ALLOCS allocations with stacks.
# RECORD_OPTS: more options of memscribe record.
verified() {
    local name=$1 min=$2 n
    shift 2
    # shellcheck disable=SC2086 # RECORD_OPTS is a list of options
    "$MEMSCRIBE" record -q ${RECORD_OPTS:-} -o "$WORK/$name.mscr" -- "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
        fail "$name under MEMSCRIBE_UNWIND=verify exited with $?: $(grep -A2 'walk differs' "$WORK/$name.err" || tail -3 "$WORK/$name.err")"
    ! grep -q "walk differs" "$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
    n=$("$MEMSCRIBE" dump "$WORK/$name.mscr" | awk '$5 ~ /^(malloc|calloc|realloc)$/ && / stack=[1-9]/ { n++ } END { print n + 0 }')
    [ "$n" -ge "$min" ] || fail "$name: only $n allocations with a stack, expected at least $min; stdout: $(head -c 300 "$WORK/$name.out"); stderr: $(tail -5 "$WORK/$name.err")"
    echo "ok: $name, $n allocations with stacks, every walk the same as libunwind's"
}

# Each workload's size, and the allocations it must make at least.
case ${1:-full} in
full)
    rounds=200 min_unw=30000 rows=5000 min_sql=50000 py_n=20000 py_malloc=malloc min_py=50000
    perl_n=40000 min_perl=50000 git_lines=6000 git_files=400 min_git=20000 cc1=1 ;;
small) # python3's own small-object allocator: its start alone makes 37,000 malloc calls
    rounds=20 min_unw=3000 rows=300 min_sql=3000 py_n=200 py_malloc=pymalloc min_py=300
    perl_n=400 min_perl=1000 git_lines=300 git_files=20 min_git=1000 cc1=0 ;;
*) echo "usage: unwind_verify.sh [small]" >&2; exit 2 ;;
esac

verified col_unwind "$min_unw" "$MS_PROGRAMS/col_unwind" "$rounds"
verified col_unwind_o2 "$min_unw" "$MS_PROGRAMS/col_unwind_o2" "$rounds"
awk -v rows="$rows" -f "$MS_SOURCE/bench/gen_sql.awk" >"$WORK/script.sql"
verified sqlite "$min_sql" sqlite3 -batch :memory: ".read $WORK/script.sql"
# A walk of 10 frames at most: most walks stop at their maximum, take the
# last one's frames past it, or fall short of it and step on.
RECORD_OPTS="--depth 6" verified col_unwind_depth6 "$min_unw" "$MS_PROGRAMS/col_unwind_o2" "$rounds"
RECORD_OPTS="--depth 6" verified sqlite_depth6 "$min_sql" sqlite3 -batch :memory: ".read $WORK/script.sql"
PYTHONMALLOC=$py_malloc verified python3 "$min_py" python3 -c '
import json, re, sys
rows = [{"id": i, "name": "n%d" % i, "tags": [str(j) for j in range(i % 7)]} for i in range(int(sys.argv[1]))]
text = json.dumps(rows)
print(len(json.loads(text)), len(re.findall(r"n[0-9]+", text)))' "$py_n"
[ "$cc1" = 0 ] ||
    verified cc1 20000 gcc -O2 -c /usr/share/doc/libpng-dev/examples/pngtest.c -o "$WORK/pngtest.o"
# shellcheck disable=SC2016 # perl's variables
verified perl "$min_perl" perl -e '
my %h;
$h{"k$_"} = join(",", map { $_ * 3 } 1 .. ($_ % 9)) for 1 .. $ARGV[0];
my @k = sort { length($h{$a}) <=> length($h{$b}) || $a cmp $b } keys %h;
print scalar(@k), "\n";' "$perl_n"
# git's own programs (git, git-pack-objects, ...) each checked.
mkdir "$WORK/git"
seq 1 "$git_lines" | awk -v d="$WORK/git" -v n="$git_files" '{ print "line " $1 > (d "/f" ($1 % n)) }'
# shellcheck disable=SC2016 # the inner shell's
verified git "$min_git" sh -c 'cd "$1" && git init -q . && git add . &&
    git -c user.name=t -c user.email=t@example.org commit -qm one &&
    git log --stat -p >/dev/null && git gc -q' sh "$WORK/git"
