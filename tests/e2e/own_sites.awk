# report --format csv --top 0 (every call site) -> the program's own call
# sites, a line each: "ALLOCATIONS BYTES TEMPORARY LEAKED_BYTES
# LEAKED_BLOCKS SITE", SITE the row's two innermost frames in the program's
# source src (-v src=FILE; the call site and its caller), rows of one SITE
# added up; sort the output (LC_ALL=C sort -k6) to compare it. Rows that never reach
# src (the C library's and the C++ runtime's start-up) are left out: they
# are the runtime's, not the program's; peaks too: with threads they depend
# on the interleaving. awk, not jq: a C++ program's 60 000 deep stacks are
# 230 MB of JSON, minutes of jq under qemu-user.
# Columns: pid,image,stack_id,peak_bytes,leaked_bytes,leaked_blocks,
# allocations,allocated_bytes,temporary,stack (the last may hold commas).
BEGIN { FS = "," }
NR == 1 { next }
{
    stack = $0
    for (i = 1; i <= 9; i++)
        stack = substr(stack, index(stack, ",") + 1)
    gsub(/^"|"$/, "", stack)
    n = split(stack, f, ";")
    own = ""
    k = 0
    for (i = 1; i <= n && k < 2; i++)
        if (index(f[i], "(" src ":")) {
            own = k ? own " < " f[i] : f[i]
            k++
        }
    if (own == "")
        next
    a[own] += $7; b[own] += $8; t[own] += $9; lb[own] += $5; lk[own] += $6
}
END {
    for (s in a)
        printf "%.0f %.0f %.0f %.0f %.0f %s\n", a[s], b[s], t[s], lb[s], lk[s], s
}
