/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the PDB reader (src/analysis/sym/ana_sym_pdb.c,
 * ana_sym_msf.c): read the input as a PDB and look up RVAs across the
 * first 64 KiB. Built by tests/fuzz/run.sh; test_sym_pdb replays the same
 * function on tests/fuzz/corpus_pdb and on damaged copies of its seed in
 * the normal build. */
#include <stddef.h>
#include <stdint.h>

#include "analysis/sym/ana_sym_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ana_sym_pdb *p;
    const char *why = NULL;
    volatile uint64_t acc = 0;

    if (ana_sym_pdb_parse(&p, data, size, NULL, 0, &why))
        return 0;
    for (uint64_t rva = 0; rva < 0x10000; rva += 7) {
        struct ana_sym_pdb_hit h;
        if (!ana_sym_pdb_lookup(p, rva, &h))
            acc += h.line + h.function_rva + (h.function ? (uint8_t)h.function[0] : 0) +
                   (h.file ? (uint8_t)h.file[0] : 0);
    }
    ana_sym_pdb_close(p);
    return 0;
}
