/* SPDX-License-Identifier: MIT */
/* Inline sites of a PDB (ana_sym_pdb_inl.c): the names of inlined
 * functions from the IPI stream (LF_FUNC_ID, LF_MFUNC_ID), and an
 * S_INLINESITE's binary annotations turned into code ranges with lines. */
#ifndef ANA_SYM_PDB_INL_H
#define ANA_SYM_PDB_INL_H

#include <stddef.h>
#include <stdint.h>

/* The IPI stream's records by item id. */
struct pdb_ipi {
    uint8_t *s; /* the stream, owned */
    uint32_t size;
    uint32_t begin, nr; /* ids begin .. begin + nr - 1 */
    uint32_t *offs;     /* record offsets in s */
};

/* Index the IPI stream s (size bytes; taken over, freed by pdb_ipi_free).
 * Returns 0, -EPROTO (a record past the stream's end) or -ENOMEM. */
int pdb_ipi_load(struct pdb_ipi *ipi, uint8_t *s, uint32_t size);
/* The name of the function item id (NUL-ended in the stream), or NULL. */
const char *pdb_ipi_func_name(const struct pdb_ipi *ipi, uint32_t id);
void pdb_ipi_free(struct pdb_ipi *ipi);

/* One code range of an inline site, offsets from its procedure's start. */
struct pdb_inl_row {
    uint32_t start, end, line;
    uint32_t file; /* offset of its entry in the module's checksums */
};

/* Decode the binary annotations ann[0..len) of an inline site whose
 * inlinee starts at line in file; a range without an explicit length ends
 * where the next starts, or at proc_size. Rows go to rows[0..max); returns
 * how many, or -EPROTO for an operand cut short. */
int pdb_inl_decode(const uint8_t *ann, uint32_t len, uint32_t line, uint32_t file,
                   uint32_t proc_size, struct pdb_inl_row *rows, uint32_t max);

#endif
