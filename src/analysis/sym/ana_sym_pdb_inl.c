/* SPDX-License-Identifier: MIT */
/* Inline sites of a PDB (ana_sym_pdb_inl.h). The binary annotations are a
 * byte code (CodeView's BinaryAnnotationsOpCode) over a state of code
 * offset, code length, line and file: a change of the code offset starts a
 * range at the new offset with the line as it is then, a code length ends
 * the last range. */
#include "analysis/sym/ana_sym_pdb_inl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LF_FUNC_ID 0x1601
#define LF_MFUNC_ID 0x1602

enum {
    BA_INVALID = 0,
    BA_CODE_OFFSET = 1,
    BA_CODE_OFFSET_BASE = 2,
    BA_CHANGE_CODE_OFFSET = 3,
    BA_CHANGE_CODE_LENGTH = 4,
    BA_CHANGE_FILE = 5,
    BA_CHANGE_LINE_OFFSET = 6,
    BA_CHANGE_LINE_END_DELTA = 7,
    BA_CHANGE_RANGE_KIND = 8,
    BA_CHANGE_COLUMN_START = 9,
    BA_CHANGE_COLUMN_END_DELTA = 10,
    BA_CHANGE_CODE_OFFSET_AND_LINE = 11,
    BA_CHANGE_CODE_LENGTH_AND_OFFSET = 12,
    BA_CHANGE_COLUMN_END = 13,
};

static uint32_t rd16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int pdb_ipi_load(struct pdb_ipi *ipi, uint8_t *s, uint32_t size)
{
    memset(ipi, 0, sizeof(*ipi));
    ipi->s = s;
    ipi->size = size;
    if (size < 56)
        return 0; /* no records */
    uint32_t head = rd32(s + 4), begin = rd32(s + 8), end = rd32(s + 12);
    if (head > size || end < begin || end - begin > size / 4)
        return -EPROTO;
    ipi->begin = begin;
    if (end > begin && !(ipi->offs = malloc((size_t)(end - begin) * sizeof(*ipi->offs))))
        return -ENOMEM;
    for (uint32_t at = head; at + 4 <= size && ipi->nr < end - begin;) {
        uint32_t len = rd16(s + at);
        if (len < 2 || len > size - at - 2)
            return -EPROTO;
        ipi->offs[ipi->nr++] = at;
        at += 2 + len;
    }
    return 0;
}

const char *pdb_ipi_func_name(const struct pdb_ipi *ipi, uint32_t id)
{
    if (id < ipi->begin || id - ipi->begin >= ipi->nr)
        return NULL;
    uint32_t at = ipi->offs[id - ipi->begin], len = rd16(ipi->s + at);
    uint32_t kind = rd16(ipi->s + at + 2);
    /* after the kind: scope or parent type (4), function type (4), name */
    if ((kind != LF_FUNC_ID && kind != LF_MFUNC_ID) || len < 2 + 8 + 1)
        return NULL;
    const char *name = (const char *)ipi->s + at + 12;
    return memchr(name, 0, len - 10) ? name : NULL;
}

void pdb_ipi_free(struct pdb_ipi *ipi)
{
    free(ipi->s);
    free(ipi->offs);
    memset(ipi, 0, sizeof(*ipi));
}

/* A compressed unsigned operand (1, 2 or 4 bytes), or -1 when cut short or
 * malformed. */
static int64_t operand(const uint8_t *a, uint32_t len, uint32_t *at)
{
    if (*at >= len)
        return -1;
    uint8_t b = a[(*at)++];
    if (!(b & 0x80))
        return b;
    if ((b & 0xc0) == 0x80) {
        if (*at >= len)
            return -1;
        return (int64_t)((uint32_t)(b & 0x3f) << 8 | a[(*at)++]);
    }
    if ((b & 0xe0) == 0xc0) {
        if (len - *at < 3)
            return -1;
        uint32_t v = (uint32_t)(b & 0x1f) << 24 | (uint32_t)a[*at] << 16 |
                     (uint32_t)a[*at + 1] << 8 | a[*at + 2];
        *at += 3;
        return v;
    }
    return -1;
}

/* A signed operand: the sign in the low bit. */
static int32_t signed_of(uint32_t v)
{
    return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

int pdb_inl_decode(const uint8_t *ann, uint32_t len, uint32_t line, uint32_t file,
                   uint32_t proc_size, struct pdb_inl_row *rows, uint32_t max)
{
    uint32_t at = 0, n = 0, offset = 0;
    int64_t line_now = line;

    while (at < len) {
        uint8_t op = ann[at++];
        int64_t v = 0, v2 = 0;
        int starts = 0;

        if (op == BA_INVALID)
            break; /* the padding after the last one */
        if (op > BA_CHANGE_COLUMN_END || (v = operand(ann, len, &at)) < 0)
            return -EPROTO;
        switch (op) {
        case BA_CODE_OFFSET:
            offset = (uint32_t)v;
            starts = 1;
            break;
        case BA_CHANGE_CODE_OFFSET:
            offset += (uint32_t)v;
            starts = 1;
            break;
        case BA_CHANGE_CODE_OFFSET_AND_LINE:
            offset += (uint32_t)v & 0xf;
            line_now += signed_of((uint32_t)v >> 4);
            starts = 1;
            break;
        case BA_CHANGE_CODE_LENGTH_AND_OFFSET:
            if ((v2 = operand(ann, len, &at)) < 0)
                return -EPROTO;
            offset += (uint32_t)v2;
            starts = 1;
            break;
        case BA_CHANGE_CODE_LENGTH:
            if (n && rows[n - 1].start == offset)
                rows[n - 1].end = offset + (uint32_t)v;
            offset += (uint32_t)v;
            break;
        case BA_CHANGE_FILE:
            file = (uint32_t)v;
            break;
        case BA_CHANGE_LINE_OFFSET:
            line_now += signed_of((uint32_t)v);
            break;
        default: /* base segment, line end, range kind, columns */
            break;
        }
        if (!starts)
            continue;
        if (n && rows[n - 1].end == 0)
            rows[n - 1].end = offset; /* the last range ends where this one starts */
        if (n == max)
            continue;
        rows[n++] = (struct pdb_inl_row){offset, 0, line_now > 0 ? (uint32_t)line_now : 0, file};
        if (op == BA_CHANGE_CODE_LENGTH_AND_OFFSET)
            rows[n - 1].end = offset + (uint32_t)v;
    }
    if (n && rows[n - 1].end == 0)
        rows[n - 1].end = proc_size > rows[n - 1].start ? proc_size : rows[n - 1].start;
    return (int)n;
}
