# report's JSON (--top large enough for every row) -> the program's own call
# sites, a line each: "ALLOCATIONS BYTES TEMPORARY LEAKED_BYTES LEAKED_BLOCKS
# SITE", SITE the row's two innermost frames in the program's source $src
# (the call site and its caller), rows of one SITE added up. Rows that never
# reach $src (the C library's and the C++ runtime's start-up) are left out:
# they are the runtime's, not the program's. Peaks are left out too: with
# threads they depend on the interleaving.
[.processes[] | .top.allocations[]
 | {own: ([.stack[] | select(test("\\(" + $src + ":"))] | .[0:2] | join(" < ")),
    allocations, allocated_bytes, temporary, leaked_bytes, leaked_blocks}
 | select(.own != "")]
| group_by(.own)
| .[]
| "\(map(.allocations) | add) \(map(.allocated_bytes) | add) \(map(.temporary) | add) \(map(.leaked_bytes) | add) \(map(.leaked_blocks) | add) \(.[0].own)"
