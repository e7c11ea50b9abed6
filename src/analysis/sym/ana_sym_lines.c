/* SPDX-License-Identifier: MIT */
/* A compile unit's DWARF line table (.debug_line, versions 2 to 5), decoded
 * into a compact array once, then searched by address.
 *
 * Why not libdw's dwarf_getsrclines(): it allocates every row, sorts them
 * all with qsort, and its file table (dwarf_getsrcfiles, for inline call
 * sites) needs the same full read; on a 50,000-row C++ unit that is ~40
 * million instructions, the largest cost of symbolizing a trace's stacks.
 * Rows of one sequence already come in address order, so only the
 * sequences are sorted here. Anything this decoder does not know (a form,
 * a version, VLIW op_index) makes it give up, and the caller falls back to
 * libdw for that unit. Every read is bounds-checked: the input may be a
 * corrupt or hostile file. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"
#include "util/util_array.h"
#include "util/util_leb128.h"
#include "util/util_search.h"

/* DWARF constants (dwarf.h has them too, but spelling them out keeps this
 * decoder readable on its own). */
enum {
    LNS_COPY = 1,
    LNS_ADVANCE_PC = 2,
    LNS_ADVANCE_LINE = 3,
    LNS_SET_FILE = 4,
    LNS_SET_COLUMN = 5,
    LNS_NEGATE_STMT = 6,
    LNS_SET_BASIC_BLOCK = 7,
    LNS_CONST_ADD_PC = 8,
    LNS_FIXED_ADVANCE_PC = 9,
    LNE_END_SEQUENCE = 1,
    LNE_SET_ADDRESS = 2,
    LNE_DEFINE_FILE = 3,
    LNCT_PATH = 1,
    LNCT_DIRECTORY_INDEX = 2,
    FORM_BLOCK2 = 0x03,
    FORM_BLOCK4 = 0x04,
    FORM_DATA2 = 0x05,
    FORM_DATA4 = 0x06,
    FORM_DATA8 = 0x07,
    FORM_STRING = 0x08,
    FORM_BLOCK = 0x09,
    FORM_BLOCK1 = 0x0a,
    FORM_DATA1 = 0x0b,
    FORM_STRP = 0x0e,
    FORM_UDATA = 0x0f,
    FORM_DATA16 = 0x1e,
    FORM_LINE_STRP = 0x1f,
};

struct row {
    uint64_t addr;
    uint32_t file;
    uint32_t line;
    uint32_t column;
};

struct seq {
    uint64_t lo, hi; /* [lo, hi): first row's address to the end_sequence's */
    uint32_t first;  /* index of its first row */
    uint32_t nr;     /* rows, the end_sequence row excluded */
};

struct ana_sym_lines {
    struct row *rows;
    size_t nr_rows, cap_rows;
    struct seq *seqs;
    size_t nr_seqs, cap_seqs;
    /* File table, indexed by the DWARF file number (from 1 before v5). */
    const char **file_names; /* as in the table */
    uint32_t *file_dirs;
    char **file_paths; /* joined with the directory on first use */
    size_t nr_files, cap_files;
    const char **dirs;
    size_t nr_dirs, cap_dirs;
    const char *comp_dir;
};

struct rd {
    const uint8_t *p, *end;
    bool bad;
};

static bool need(struct rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return false;
    }
    return true;
}

static uint64_t rd_uint(struct rd *r, unsigned size)
{
    uint64_t v = 0;

    if (!need(r, size))
        return 0;
    for (unsigned i = 0; i < size; i++) /* little-endian: x86-64 ELF */
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += size;
    return v;
}

static uint64_t rd_uleb(struct rd *r)
{
    uint64_t v;

    if (r->bad || !util_uleb128(&r->p, r->end, &v)) {
        r->bad = true;
        return 0;
    }
    return v;
}

static int64_t rd_sleb(struct rd *r)
{
    int64_t v;

    if (r->bad || !util_sleb128(&r->p, r->end, &v)) {
        r->bad = true;
        return 0;
    }
    return v;
}

static const char *rd_cstr(struct rd *r)
{
    const uint8_t *nul;

    if (r->bad || !(nul = memchr(r->p, 0, (size_t)(r->end - r->p)))) {
        r->bad = true;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p = nul + 1;
    return s;
}

static const char *str_at(const uint8_t *sec, size_t size, uint64_t off)
{
    if (!sec || off >= size || !memchr(sec + off, 0, size - off))
        return NULL;
    return (const char *)sec + off;
}

static int push_row(struct ana_sym_lines *lt, const struct row *row)
{
    if (UTIL_ARRAY_RESERVE(lt->rows, lt->cap_rows, (size_t)lt->nr_rows + 1, 1024))
        return -ENOMEM;
    lt->rows[lt->nr_rows++] = *row;
    return 0;
}

static int push_seq(struct ana_sym_lines *lt, const struct seq *s)
{
    if (UTIL_ARRAY_RESERVE(lt->seqs, lt->cap_seqs, (size_t)lt->nr_seqs + 1, 64))
        return -ENOMEM;
    lt->seqs[lt->nr_seqs++] = *s;
    return 0;
}

static int push_dir(struct ana_sym_lines *lt, const char *d)
{
    if (UTIL_ARRAY_RESERVE(lt->dirs, lt->cap_dirs, (size_t)lt->nr_dirs + 1, 16))
        return -ENOMEM;
    lt->dirs[lt->nr_dirs++] = d;
    return 0;
}

static int push_file(struct ana_sym_lines *lt, const char *name, uint32_t dir)
{
    /* Three arrays of one capacity: each grows from a copy of it. */
    size_t c1 = lt->cap_files, c2 = lt->cap_files, c3 = lt->cap_files;

    if (UTIL_ARRAY_RESERVE(lt->file_names, c1, lt->nr_files + 1, 32) ||
        UTIL_ARRAY_RESERVE(lt->file_dirs, c2, lt->nr_files + 1, 32) ||
        UTIL_ARRAY_RESERVE(lt->file_paths, c3, lt->nr_files + 1, 32))
        return -ENOMEM;
    lt->cap_files = c1;
    lt->file_names[lt->nr_files] = name;
    lt->file_dirs[lt->nr_files] = dir;
    lt->file_paths[lt->nr_files] = NULL;
    lt->nr_files++;
    return 0;
}

/* Skip or read one attribute of a v5 directory/file entry. Strings come
 * back in *str, numbers in *num. Returns false for a form not handled. */
static bool rd_form(struct rd *r, uint64_t form, unsigned offset_size,
                    const struct ana_sym_sections *sec, const char **str, uint64_t *num)
{
    *str = NULL;
    *num = 0;
    switch (form) {
    case FORM_STRING:
        *str = rd_cstr(r);
        return true;
    case FORM_LINE_STRP:
        *str = str_at(sec->line_str, sec->line_str_size, rd_uint(r, offset_size));
        return true;
    case FORM_STRP:
        *str = str_at(sec->str, sec->str_size, rd_uint(r, offset_size));
        return true;
    case FORM_UDATA:
        *num = rd_uleb(r);
        return true;
    case FORM_DATA1:
        *num = rd_uint(r, 1);
        return true;
    case FORM_DATA2:
        *num = rd_uint(r, 2);
        return true;
    case FORM_DATA4:
        *num = rd_uint(r, 4);
        return true;
    case FORM_DATA8:
        *num = rd_uint(r, 8);
        return true;
    case FORM_DATA16:
        if (need(r, 16))
            r->p += 16;
        return true;
    case FORM_BLOCK:
    case FORM_BLOCK1:
    case FORM_BLOCK2:
    case FORM_BLOCK4: {
        uint64_t len = form == FORM_BLOCK    ? rd_uleb(r)
                       : form == FORM_BLOCK1 ? rd_uint(r, 1)
                       : form == FORM_BLOCK2 ? rd_uint(r, 2)
                                             : rd_uint(r, 4);
        if (need(r, len))
            r->p += len;
        return true;
    }
    default:
        return false;
    }
}

/* A v5 entry list (directories or files): format, count, entries. */
static int read_entries_v5(struct rd *r, struct ana_sym_lines *lt, bool files, unsigned offset_size,
                           const struct ana_sym_sections *sec)
{
    uint64_t fmt[16][2];
    unsigned nr_fmt = (unsigned)rd_uint(r, 1);

    if (nr_fmt > 16)
        return -EPROTO;
    for (unsigned i = 0; i < nr_fmt; i++) {
        fmt[i][0] = rd_uleb(r);
        fmt[i][1] = rd_uleb(r);
    }
    uint64_t count = rd_uleb(r);
    if (r->bad || count > (uint64_t)(r->end - r->p))
        return -EPROTO;
    for (uint64_t k = 0; k < count; k++) {
        const char *path = NULL;
        uint64_t dir = 0;
        for (unsigned i = 0; i < nr_fmt; i++) {
            const char *s;
            uint64_t n;
            if (!rd_form(r, fmt[i][1], offset_size, sec, &s, &n))
                return -EPROTO;
            if (fmt[i][0] == LNCT_PATH)
                path = s;
            else if (fmt[i][0] == LNCT_DIRECTORY_INDEX)
                dir = n;
        }
        if (r->bad)
            return -EPROTO;
        int rc = files ? push_file(lt, path, dir > UINT32_MAX ? UINT32_MAX : (uint32_t)dir)
                       : push_dir(lt, path);
        if (rc)
            return rc;
    }
    return 0;
}

/* Before v5: NUL-terminated lists; directory 0 is the compile directory,
 * file numbers start at 1. */
static int read_entries_v4(struct rd *r, struct ana_sym_lines *lt)
{
    int rc = push_dir(lt, lt->comp_dir);

    while (!rc) {
        const char *d = rd_cstr(r);
        if (!d)
            return -EPROTO;
        if (!*d)
            break;
        rc = push_dir(lt, d);
    }
    if (!rc)
        rc = push_file(lt, NULL, 0); /* file 0: unused before v5 */
    while (!rc) {
        const char *f = rd_cstr(r);
        if (!f)
            return -EPROTO;
        if (!*f)
            break;
        uint64_t dir = rd_uleb(r);
        rd_uleb(r); /* mtime */
        rd_uleb(r); /* length */
        if (r->bad)
            return -EPROTO;
        rc = push_file(lt, f, dir > UINT32_MAX ? UINT32_MAX : (uint32_t)dir);
    }
    return rc;
}

struct header {
    unsigned version;
    unsigned offset_size;
    unsigned min_inst_len;
    bool default_is_stmt;
    int line_base;
    unsigned line_range;
    unsigned opcode_base;
    uint8_t std_lengths[256];
};

static int run_program(struct rd *r, struct ana_sym_lines *lt, const struct header *h)
{
    struct row row = {.file = 1, .line = 1};
    uint64_t seq_lo = 0;
    uint32_t seq_first = 0;
    bool in_seq = false;
    /* The line register wraps instead of overflowing (corrupt input can
     * advance it by anything); only 1..UINT32_MAX is kept as a line. */
    uint64_t line = 1;
    int rc = 0;

    while (!rc && r->p < r->end && !r->bad) {
        unsigned op = *r->p++;
        bool emit = false;

        if (op >= h->opcode_base) {
            unsigned adj = op - h->opcode_base;
            row.addr += (uint64_t)(adj / h->line_range) * h->min_inst_len;
            line += (uint64_t)(int64_t)(h->line_base + (int)(adj % h->line_range));
            emit = true;
        } else if (op == 0) {
            uint64_t len = rd_uleb(r);
            if (!need(r, len) || len == 0)
                return -EPROTO;
            const uint8_t *next = r->p + len;
            unsigned sub = *r->p++;
            if (sub == LNE_END_SEQUENCE) {
                if (in_seq && row.addr > seq_lo)
                    rc = push_seq(lt, &(struct seq){.lo = seq_lo,
                                                    .hi = row.addr,
                                                    .first = seq_first,
                                                    .nr = (uint32_t)(lt->nr_rows - seq_first)});
                in_seq = false;
                row = (struct row){.file = 1, .line = 1};
                line = 1;
            } else if (sub == LNE_SET_ADDRESS) {
                if (len - 1 != 4 && len - 1 != 8)
                    return -EPROTO;
                row.addr = rd_uint(r, (unsigned)(len - 1));
            } else if (sub == LNE_DEFINE_FILE) {
                return -EPROTO; /* obsolete; never seen from current compilers */
            }
            r->p = next;
        } else {
            switch (op) {
            case LNS_COPY:
                emit = true;
                break;
            case LNS_ADVANCE_PC:
                row.addr += rd_uleb(r) * h->min_inst_len;
                break;
            case LNS_ADVANCE_LINE:
                line += (uint64_t)rd_sleb(r);
                break;
            case LNS_SET_FILE:
                row.file = (uint32_t)rd_uleb(r);
                break;
            case LNS_SET_COLUMN:
                row.column = (uint32_t)rd_uleb(r);
                break;
            case LNS_NEGATE_STMT:
            case LNS_SET_BASIC_BLOCK:
                break;
            case LNS_CONST_ADD_PC:
                row.addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst_len;
                break;
            case LNS_FIXED_ADVANCE_PC:
                row.addr += rd_uint(r, 2);
                break;
            default:
                /* Known by its argument count (prologue_end, isa, ...). */
                for (unsigned i = 0; i < h->std_lengths[op]; i++)
                    rd_uleb(r);
                break;
            }
        }
        if (emit) {
            if (!in_seq) {
                in_seq = true;
                seq_lo = row.addr;
                seq_first = (uint32_t)lt->nr_rows;
            }
            row.line = line >= 1 && line <= UINT32_MAX ? (uint32_t)line : 0;
            rc = push_row(lt, &row);
        }
    }
    return r->bad ? -EPROTO : rc;
}

static int seq_cmp(const void *pa, const void *pb)
{
    const struct seq *a = pa, *b = pb;

    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

int ana_sym_lines_decode(struct ana_sym_lines **out, const struct ana_sym_sections *sec,
                         uint64_t offset, const char *comp_dir)
{
    struct rd r = {.p = sec->line, .end = sec->line + sec->line_size};
    struct header h = {0};
    struct ana_sym_lines *lt;
    int rc = -EPROTO;

    *out = NULL;
    if (!sec->line || offset >= sec->line_size)
        return -EPROTO;
    r.p += offset;
    uint64_t unit_length = rd_uint(&r, 4);
    h.offset_size = 4;
    if (unit_length == 0xffffffffu) {
        unit_length = rd_uint(&r, 8);
        h.offset_size = 8;
    }
    if (r.bad || unit_length > (uint64_t)(r.end - r.p))
        return -EPROTO;
    r.end = r.p + unit_length;
    h.version = (unsigned)rd_uint(&r, 2);
    if (h.version < 2 || h.version > 5)
        return -EPROTO;
    if (h.version >= 5) {
        unsigned addr_size = (unsigned)rd_uint(&r, 1);
        rd_uint(&r, 1); /* segment selector size */
        if (addr_size != 4 && addr_size != 8)
            return -EPROTO;
    }
    uint64_t header_length = rd_uint(&r, h.offset_size);
    if (r.bad || header_length > (uint64_t)(r.end - r.p))
        return -EPROTO;
    const uint8_t *program = r.p + header_length;
    h.min_inst_len = (unsigned)rd_uint(&r, 1);
    if (h.version >= 4 && rd_uint(&r, 1) != 1)
        return -EPROTO; /* VLIW op_index: not for the machines memscribe runs on */
    h.default_is_stmt = rd_uint(&r, 1) != 0;
    h.line_base = (int8_t)rd_uint(&r, 1);
    h.line_range = (unsigned)rd_uint(&r, 1);
    h.opcode_base = (unsigned)rd_uint(&r, 1);
    if (r.bad || h.line_range == 0 || h.opcode_base == 0)
        return -EPROTO;
    for (unsigned i = 1; i < h.opcode_base; i++)
        h.std_lengths[i] = (uint8_t)rd_uint(&r, 1);

    lt = calloc(1, sizeof(*lt));
    if (!lt)
        return -ENOMEM;
    lt->comp_dir = comp_dir;
    if (h.version >= 5) {
        rc = read_entries_v5(&r, lt, false, h.offset_size, sec);
        if (!rc)
            rc = read_entries_v5(&r, lt, true, h.offset_size, sec);
    } else {
        rc = read_entries_v4(&r, lt);
    }
    if (!rc && (r.bad || r.p > program))
        rc = -EPROTO;
    if (!rc) {
        r.p = program;
        rc = run_program(&r, lt, &h);
    }
    if (rc) {
        ana_sym_lines_free(lt);
        return rc;
    }
    if (lt->nr_seqs > 1)
        qsort(lt->seqs, lt->nr_seqs, sizeof(*lt->seqs), seq_cmp);
    *out = lt;
    return 0;
}

int ana_sym_lines_find(const struct ana_sym_lines *lt, uint64_t pc, uint32_t *file, uint32_t *line,
                       uint32_t *column)
{
    /* The last sequence starting at or before pc... */
    size_t lo =
        util_search_above(lt->seqs, lt->nr_seqs, sizeof(*lt->seqs), offsetof(struct seq, lo), pc);

    /* ...that holds it (sequences do not overlap; a few tries for the
     * odd unit whose sequences do). */
    const struct seq *s = NULL;
    for (size_t k = 0; k < 4 && lo > 0; k++, lo--) {
        if (pc < lt->seqs[lo - 1].hi) {
            s = &lt->seqs[lo - 1];
            break;
        }
    }
    if (!s || s->nr == 0)
        return -ENOENT;
    /* The last row at or before pc: of several rows at one address, the
     * last is the one in effect for the instructions that follow. */
    const struct row *rows = lt->rows + s->first;
    lo = util_search_above(rows, s->nr, sizeof(*rows), offsetof(struct row, addr), pc);
    if (lo == 0)
        return -ENOENT;
    *file = rows[lo - 1].file;
    *line = rows[lo - 1].line;
    *column = rows[lo - 1].column;
    return 0;
}

const char *ana_sym_lines_file(struct ana_sym_lines *lt, struct ana_sym_arena *a, uint64_t index)
{
    if (index >= lt->nr_files || !lt->file_names[index])
        return NULL;
    if (lt->file_paths[index])
        return lt->file_paths[index];
    const char *name = lt->file_names[index];
    uint32_t d = lt->file_dirs[index];
    const char *dir = d < lt->nr_dirs ? lt->dirs[d] : NULL;
    const char *base = lt->comp_dir;
    size_t nlen = strlen(name);

    if (name[0] == '/' || !dir || !dir[0]) {
        lt->file_paths[index] = (char *)name;
        return name;
    }
    /* A relative directory is relative to the compile directory. */
    bool rel = dir[0] != '/' && base && base[0] && strcmp(dir, base) != 0;
    size_t dlen = strlen(dir), blen = rel ? strlen(base) : 0;
    char *p = ana_sym_arena_alloc(a, blen + 1 + dlen + 1 + nlen + 1);
    if (!p)
        return name;
    size_t n = 0;
    if (rel) {
        memcpy(p, base, blen);
        p[blen] = '/';
        n = blen + 1;
    }
    memcpy(p + n, dir, dlen);
    n += dlen;
    p[n++] = '/';
    memcpy(p + n, name, nlen + 1);
    lt->file_paths[index] = p;
    return p;
}

void ana_sym_lines_free(struct ana_sym_lines *lt)
{
    if (!lt)
        return;
    free(lt->rows);
    free(lt->seqs);
    free(lt->file_names);
    free(lt->file_dirs);
    free(lt->file_paths);
    free(lt->dirs);
    free(lt);
}
