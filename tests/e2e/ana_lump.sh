#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Thousands of call sites: what the flame graph and the HTML report lump
# into "(N other call sites)" holds at most 1 % of any total, and the page
# says how much. A generated program (compiled here) has 10,000 functions
# that each allocate and free 64 bytes 10 times and 2,000 that allocate and
# free 8 bytes once: 102,000 allocations, 6,416,000 bytes, 12,000 sites,
# more than the flame graph's 10,000 and the page's 2,000. Both keep sites
# while the rest would hold over 1 % of a total, so exactly 1,020 of the
# small sites (1,020 allocations = 1.0 %, 8,160 bytes = 0.1 %) are lumped.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"

python3 - "$WORK/many.c" <<'PY'
import sys
big, small = 10000, 2000
with open(sys.argv[1], "w") as f:
    f.write("#include <stdlib.h>\n")
    for i in range(big):
        f.write("__attribute__((noinline)) static void b%d(void)\n"
                "{ for (int i = 0; i < 10; i++) { void *volatile p = malloc(64); free(p); } }\n" % i)
    for i in range(small):
        f.write("__attribute__((noinline)) static void s%d(void)\n"
                "{ void *volatile p = malloc(8); free(p); }\n" % i)
    f.write("static void (*const fns[])(void) = {\n")
    f.write(",".join(["b%d" % i for i in range(big)] + ["s%d" % i for i in range(small)]))
    f.write("};\nint main(void)\n{\n"
            "    for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)\n"
            "        fns[i]();\n    return 0;\n}\n")
PY
"${CC:-cc}" -O0 -fno-omit-frame-pointer -o "$WORK/many" "$WORK/many.c" || fail "compiling the generated program"
"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$WORK/many" || fail "record"

# The program's own totals (nothing else allocates in it).
"$MEMSCRIBE" report --format=json "$WORK/t.mscr" >"$WORK/r.json"
expect "allocations, bytes" "$(jq -c "[.total.allocations, .total.allocated_bytes]" "$WORK/r.json")" "[102000,6416000]"

# The flame graph: one "(1020 other call sites)" frame of 1,020 allocations
# (1.00 %); by bytes the same sites, 8,160 bytes (0.13 %).
"$MEMSCRIBE" flamegraph --cost allocations "$WORK/t.mscr" -o "$WORK/a.svg"
"$MEMSCRIBE" flamegraph --cost bytes "$WORK/t.mscr" -o "$WORK/b.svg"
lump() { # svg: the lump frame's tooltip
    grep -o '<title>([0-9]* other call sites)[^<]*</title>' "$1" || echo "no lump"
}
expect "flame graph lump, allocations" "$(lump "$WORK/a.svg")" \
    "<title>(1020 other call sites) (1,020 allocations, 1.00%)</title>"
expect "flame graph lump, bytes" "$(lump "$WORK/b.svg")" \
    "<title>(1020 other call sites) (8,160 bytes, 7.97 KiB, 0.13%)</title>"

# The HTML report states the share in the lump's name.
"$MEMSCRIBE" html "$WORK/t.mscr" -o "$WORK/t.html"
expect "HTML lump" "$(grep -o '([0-9]* other call sites: [^)]*)' "$WORK/t.html" | sort -u)" \
    "(1020 other call sites: 1.0 % of allocations, 0.1 % of bytes)"
echo "ana_lump: 12,000 sites, 1,020 lumped holding 1.0 % of allocations and 0.1 % of bytes"
