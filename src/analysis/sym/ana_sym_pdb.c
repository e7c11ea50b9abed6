/* SPDX-License-Identifier: MIT */
/* A PDB's functions and lines, read offline (docs/windows.md, "Symbols"):
 * the PDB info stream (GUID, age, the named stream "/names"), the DBI
 * stream's module list and section headers, each module's symbol stream
 * (S_GPROC32/S_LPROC32 and their _ID forms: name, section, offset, size)
 * and its C13 line information (DEBUG_S_LINES rows, DEBUG_S_FILECHKSMS
 * entries naming files in "/names"), and the public symbols (S_PUB32) for
 * code without debug info. Everything is turned into two tables sorted by
 * RVA. Inline sites (S_INLINESITE, their inlinees named in the IPI stream
 * and started by DEBUG_S_INLINEELINES) become code ranges per procedure
 * (ana_sym_pdb_inl.c), so an inlined call is a frame of its own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"
#include "analysis/sym/ana_sym_pdb_inl.h"

#define S_PUB32 0x110e
#define S_LPROC32 0x110f
#define S_GPROC32 0x1110
#define S_LPROC32_ID 0x1146
#define S_GPROC32_ID 0x1147
#define S_INLINESITE 0x114d
#define S_INLINESITE_END 0x114e
#define S_INLINESITE2 0x115d
#define DEBUG_S_LINES 0xf2
#define DEBUG_S_FILECHKSMS 0xf4
#define DEBUG_S_INLINEELINES 0xf6
#define PDB_IPI_STREAM 4
#define PDB_MAX_INL_ROWS 256 /* code ranges of one inline site */
#define SCN_MEM_EXECUTE 0x20000000u
#define PDB_MAX_SECTIONS 4096

struct pdb_func {
    uint32_t start, end; /* end 0: a public symbol, it ends where the next one starts */
    const char *name;
    uint32_t inl_first, nr_inl; /* its inline ranges in ana_sym_pdb.inls */
};

/* A code range of a function inlined into a procedure, depth 1 directly. */
struct pdb_inl {
    uint32_t start, end, line, depth;
    const char *name, *file;
};

struct pdb_row {
    uint32_t start, end, line;
    const char *file;
};

struct ana_sym_pdb {
    struct ana_sym_arena arena;
    struct pdb_func *procs, *pubs;
    size_t nr_procs, nr_pubs, cap_procs, cap_pubs;
    struct pdb_row *rows;
    size_t nr_rows, cap_rows;
    struct pdb_inl *inls;
    size_t nr_inls, cap_inls;
    uint8_t *names; /* the "/names" stream: file names point into it */
    uint32_t names_size;
};

/* The state of one parse. */
struct pdb_parse {
    struct ana_sym_pdb *p;
    struct ana_sym_msf msf;
    const char **why;
    uint32_t sec_va[PDB_MAX_SECTIONS], sec_end[PDB_MAX_SECTIONS];
    uint8_t sec_code[PDB_MAX_SECTIONS];
    uint32_t nr_sec;
    struct pdb_ipi ipi; /* inlinee names */
    /* The module being read: its checksums, where each inlinee starts
     * (DEBUG_S_INLINEELINES), the procedure being read and its open inline
     * sites. */
    const uint8_t *chk;
    uint32_t chk_len;
    struct pdb_inlinee {
        uint32_t id, file, line;
    } * inlinees;
    size_t nr_inlinees, cap_inlinees;
    long proc; /* index in procs, -1: none */
    uint32_t depth;
    struct pdb_inl_row inl_rows[PDB_MAX_INL_ROWS];
};

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int bad(struct pdb_parse *x, const char *why)
{
    *x->why = why;
    return -EPROTO;
}

static int grow(void **v, size_t *cap, size_t nr, size_t size)
{
    if (nr < *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 256;
    void *w = realloc(*v, n * size);
    if (!w)
        return -ENOMEM;
    *v = w;
    *cap = n;
    return 0;
}

/* The RVA of section seg (1-based) + off, or 0 when seg is not one. */
static uint32_t rva_of(const struct pdb_parse *x, uint16_t seg, uint32_t off)
{
    if (seg < 1 || seg > x->nr_sec)
        return 0;
    return x->sec_va[seg - 1] + off;
}

/* The stream index of "/names" in the info stream's named stream map, or
 * 0xffffffff. The map: string buffer, then a hash table of (offset in
 * the buffer, stream) for the buckets its "present" bit vector marks. */
static uint32_t names_stream(const uint8_t *s, uint32_t size)
{
    if (size < 32)
        return 0xffffffffu;
    uint64_t at = 28, strs = at + 4, len = rd32(s + at);
    at = strs + len;
    if (at + 12 > size)
        return 0xffffffffu;
    uint32_t count = rd32(s + at);
    uint64_t present = rd32(s + at + 8); /* words of the present bit vector */
    at += 12 + present * 4;
    if (at + 4 > size)
        return 0xffffffffu;
    at += 4 + (uint64_t)rd32(s + at) * 4; /* the deleted bit vector */
    for (uint32_t i = 0; i < count && at + 8 <= size; i++, at += 8) {
        uint32_t key = rd32(s + at);
        if (key < len && len - key >= 7 && !memcmp(s + strs + key, "/names", 7))
            return rd32(s + at + 4);
    }
    return 0xffffffffu;
}

static int read_info(struct pdb_parse *x, const uint8_t *id, uint32_t id_len, uint32_t dbi_age)
{
    uint8_t *s;
    uint32_t size;
    int rc = ana_sym_msf_stream(&x->msf, 1, &s, &size, x->why);

    if (rc)
        return rc;
    if (size < 28) {
        free(s);
        return bad(x, "PDB info stream too short");
    }
    if (id_len == 20 &&
        (memcmp(s + 12, id, 16) || (rd32(s + 8) != rd32(id + 16) && dbi_age != rd32(id + 16)))) {
        free(s);
        return -ESTALE;
    }
    uint32_t names = names_stream(s, size);
    free(s);
    if (names == 0xffffffffu)
        return 0; /* no file names: functions still */
    rc = ana_sym_msf_stream(&x->msf, names, &x->p->names, &x->p->names_size, x->why);
    if (rc)
        return rc;
    if (x->p->names_size < 12 || rd32(x->p->names) != 0xeffeeffeu ||
        rd32(x->p->names + 8) > x->p->names_size - 12)
        return bad(x, "bad /names string table");
    return 0;
}

/* A file name: the checksum entry at off in the module's FILECHKSMS
 * subsection names an offset in /names. */
static const char *file_name(const struct pdb_parse *x, const uint8_t *chk, uint32_t chk_len,
                             uint32_t off)
{
    const struct ana_sym_pdb *p = x->p;

    if (!chk || off > chk_len || chk_len - off < 6 || !p->names)
        return NULL;
    uint32_t name = rd32(chk + off), bytes = rd32(p->names + 8);
    if (name >= bytes || !memchr(p->names + 12 + name, 0, bytes - name))
        return NULL;
    return (const char *)p->names + 12 + name;
}

static int add_row(struct pdb_parse *x, uint32_t start, uint32_t end, uint32_t line,
                   const char *file)
{
    struct ana_sym_pdb *p = x->p;

    if (grow((void **)&p->rows, &p->cap_rows, p->nr_rows, sizeof(*p->rows)))
        return -ENOMEM;
    p->rows[p->nr_rows++] =
        (struct pdb_row){.start = start, .end = end, .line = line, .file = file};
    return 0;
}

/* One DEBUG_S_LINES subsection: a code range, then blocks of rows per file. */
static int read_lines(struct pdb_parse *x, const uint8_t *d, uint32_t len, const uint8_t *chk,
                      uint32_t chk_len)
{
    if (len < 12)
        return bad(x, "DEBUG_S_LINES subsection too short");
    uint32_t base = rva_of(x, rd16(d + 4), rd32(d)), code_size = rd32(d + 8);
    int columns = rd16(d + 6) & 1;
    for (uint32_t at = 12; at < len;) {
        if (len - at < 12)
            return bad(x, "DEBUG_S_LINES block cut short");
        const char *file = file_name(x, chk, chk_len, rd32(d + at));
        uint32_t n = rd32(d + at + 4), block = rd32(d + at + 8);
        if (block < 12 || block > len - at || (uint64_t)n * (columns ? 12 : 8) > block - 12)
            return bad(x, "DEBUG_S_LINES block larger than its subsection");
        const uint8_t *row = d + at + 12;
        for (uint32_t i = 0; i < n && base; i++) {
            uint32_t off = rd32(row + 8 * (size_t)i),
                     end = i + 1 < n ? rd32(row + 8 * (size_t)i + 8) : code_size;
            uint32_t line = rd32(row + 8 * (size_t)i + 4) & 0xffffffu;
            if (line == 0xfeefee || line == 0xf00f00)
                line = 0; /* "hidden": compiler-made code */
            if (end > off && add_row(x, base + off, base + end, line, line ? file : NULL))
                return -ENOMEM;
        }
        at += block;
    }
    return 0;
}

/* DEBUG_S_INLINEELINES: where each inlined function starts (file, line). */
static int read_inlinees(struct pdb_parse *x, const uint8_t *d, uint32_t len)
{
    if (len < 4)
        return bad(x, "DEBUG_S_INLINEELINES subsection too short");
    int extended = rd32(d) == 1;
    for (uint32_t at = 4; at < len;) {
        if (len - at < 12 + (extended ? 4u : 0u))
            return bad(x, "DEBUG_S_INLINEELINES entry cut short");
        if (grow((void **)&x->inlinees, &x->cap_inlinees, x->nr_inlinees, sizeof(*x->inlinees)))
            return -ENOMEM;
        x->inlinees[x->nr_inlinees++] =
            (struct pdb_inlinee){rd32(d + at), rd32(d + at + 4), rd32(d + at + 8)};
        at += 12;
        if (extended) { /* the files of the inlinee's other lines */
            uint32_t extra = rd32(d + at);
            if (extra > (len - at - 4) / 4)
                return bad(x, "DEBUG_S_INLINEELINES entry cut short");
            at += 4 + 4 * extra;
        }
    }
    return 0;
}

/* The C13 subsections of one module. Pass 0, before the symbols: the
 * checksums (rows and inlinees name files by their offset there) and the
 * inlinees' starts; pass 1: the lines. */
static int read_c13(struct pdb_parse *x, const uint8_t *c, uint32_t len, int pass)
{
    for (uint32_t at = 0; at + 8 <= len;) {
        uint32_t kind = rd32(c + at) & 0x7fffffffu, n = rd32(c + at + 4);
        int rc = 0;
        if (n > len - at - 8)
            return bad(x, "C13 line subsection larger than its module stream");
        if (pass == 0 && kind == DEBUG_S_FILECHKSMS) {
            x->chk = c + at + 8;
            x->chk_len = n;
        } else if (pass == 0 && kind == DEBUG_S_INLINEELINES) {
            rc = read_inlinees(x, c + at + 8, n);
        } else if (pass == 1 && kind == DEBUG_S_LINES) {
            rc = read_lines(x, c + at + 8, n, x->chk, x->chk_len);
        }
        if (rc)
            return rc;
        at += 8 + ((n + 3) & ~3u);
    }
    return 0;
}

/* An S_INLINESITE (or S_INLINESITE2, with an invocation count) inside the
 * procedure being read: its annotations as ranges of the inlinee. */
static int read_inline_site(struct pdb_parse *x, const uint8_t *d, uint32_t dlen, uint32_t kind)
{
    struct ana_sym_pdb *p = x->p;
    uint32_t head = kind == S_INLINESITE2 ? 16 : 12;

    x->depth++;
    if (x->proc < 0 || dlen < head)
        return 0;
    struct pdb_func *f = &p->procs[x->proc];
    uint32_t id = rd32(d + 8), line = 0, file = 0xffffffffu;
    const char *name = pdb_ipi_func_name(&x->ipi, id);
    /* the IPI stream goes when the parse ends: the name is copied */
    if (name && !(name = ana_sym_arena_strndup(&p->arena, name, strlen(name))))
        return -ENOMEM;
    for (size_t i = 0; i < x->nr_inlinees; i++)
        if (x->inlinees[i].id == id) {
            line = x->inlinees[i].line;
            file = x->inlinees[i].file;
            break;
        }
    int n = pdb_inl_decode(d + head, dlen - head, line, file, f->end - f->start, x->inl_rows,
                           PDB_MAX_INL_ROWS);
    if (n < 0)
        return bad(x, "S_INLINESITE annotations cut short");
    for (int i = 0; i < n; i++) {
        const struct pdb_inl_row *r = &x->inl_rows[i];
        if (r->end <= r->start)
            continue;
        if (grow((void **)&p->inls, &p->cap_inls, p->nr_inls, sizeof(*p->inls)))
            return -ENOMEM;
        p->inls[p->nr_inls++] = (struct pdb_inl){
            .start = f->start + r->start,
            .end = f->start + r->end,
            .line = r->line,
            .depth = x->depth,
            .name = name ? name : "<inlined>",
            .file = file_name(x, x->chk, x->chk_len, r->file),
        };
        p->procs[x->proc].nr_inl++;
    }
    return 0;
}

/* A function named by the string at name (len bytes available; a name
 * that does not end inside its record is left out). */
static int add_func(struct pdb_parse *x, bool pub, uint32_t start, uint32_t size,
                    const uint8_t *name, size_t len)
{
    struct ana_sym_pdb *p = x->p;
    struct pdb_func **v = pub ? &p->pubs : &p->procs;
    size_t *nr = pub ? &p->nr_pubs : &p->nr_procs;
    const uint8_t *nul = memchr(name, 0, len);

    if (!nul)
        return 0;
    const char *copy =
        ana_sym_arena_strndup(&x->p->arena, (const char *)name, (size_t)(nul - name));
    if (!copy || grow((void **)v, pub ? &p->cap_pubs : &p->cap_procs, *nr, sizeof(**v)))
        return -ENOMEM;
    (*v)[(*nr)++] = (struct pdb_func){.start = start, .end = pub ? 0 : start + size, .name = copy};
    return 0;
}

/* Walk the symbol records of s[at..end): procedures, or public symbols. */
static int read_symbols(struct pdb_parse *x, const uint8_t *s, uint32_t at, uint32_t end, bool pub)
{
    while (at < end && end - at >= 4) {
        uint32_t len = rd16(s + at), kind = rd16(s + at + 2);
        const uint8_t *d = s + at + 4;
        if (len < 2 || len > end - at - 2)
            return bad(x, "symbol record larger than its stream");
        uint32_t dlen = len - 2;
        int rc = 0;
        if (!pub && dlen > 35 &&
            (kind == S_GPROC32 || kind == S_LPROC32 || kind == S_GPROC32_ID ||
             kind == S_LPROC32_ID)) {
            uint32_t rva = rva_of(x, rd16(d + 32), rd32(d + 28));
            x->proc = -1;
            x->depth = 0;
            if (rva && !(rc = add_func(x, false, rva, rd32(d + 12), d + 35, dlen - 35)) &&
                x->p->nr_procs && x->p->procs[x->p->nr_procs - 1].start == rva) {
                x->proc = (long)x->p->nr_procs - 1;
                x->p->procs[x->proc].inl_first = (uint32_t)x->p->nr_inls;
            }
        } else if (!pub && (kind == S_INLINESITE || kind == S_INLINESITE2)) {
            rc = read_inline_site(x, d, dlen, kind);
        } else if (!pub && kind == S_INLINESITE_END) {
            x->depth -= x->depth > 0;
        } else if (pub && kind == S_PUB32 && dlen > 10) {
            uint16_t seg = rd16(d + 8);
            uint32_t rva = rva_of(x, seg, rd32(d + 4));
            if (rva && x->sec_code[seg - 1])
                rc = add_func(x, true, rva, 0, d + 10, dlen - 10);
        }
        if (rc)
            return rc;
        at += 2 + len;
    }
    return 0;
}

/* One module's symbol stream: signature, symbols, C11 lines, C13 lines. */
static int read_module(struct pdb_parse *x, uint16_t stream, uint32_t sym_bytes, uint32_t c11_bytes,
                       uint32_t c13_bytes)
{
    uint8_t *s;
    uint32_t size;

    if (stream == 0xffff)
        return 0; /* a module without symbols (an import library's) */
    int rc = ana_sym_msf_stream(&x->msf, stream, &s, &size, x->why);
    if (rc)
        return rc;
    if ((uint64_t)sym_bytes + c11_bytes + c13_bytes > size || (sym_bytes && sym_bytes < 4))
        rc = bad(x, "module info sizes larger than the module's stream");
    x->chk = NULL;
    x->chk_len = 0;
    x->nr_inlinees = 0;
    x->proc = -1;
    if (!rc)
        rc = read_c13(x, s + sym_bytes + c11_bytes, c13_bytes, 0);
    if (!rc && sym_bytes)
        rc = read_symbols(x, s, 4, sym_bytes, false);
    if (!rc)
        rc = read_c13(x, s + sym_bytes + c11_bytes, c13_bytes, 1);
    x->chk = NULL; /* it points into s */
    free(s);
    return rc;
}

static int read_sections(struct pdb_parse *x, uint16_t stream)
{
    uint8_t *s;
    uint32_t size;

    if (stream == 0xffff)
        return bad(x, "no section header stream");
    int rc = ana_sym_msf_stream(&x->msf, stream, &s, &size, x->why);
    if (rc)
        return rc;
    x->nr_sec = size / 40 < PDB_MAX_SECTIONS ? size / 40 : PDB_MAX_SECTIONS;
    for (uint32_t i = 0; i < x->nr_sec; i++) {
        const uint8_t *h = s + 40 * (size_t)i;
        x->sec_va[i] = rd32(h + 12);
        x->sec_end[i] = rd32(h + 12) + rd32(h + 8);
        x->sec_code[i] = (rd32(h + 36) & SCN_MEM_EXECUTE) != 0;
    }
    free(s);
    return 0;
}

/* The DBI stream: header, module infos, ..., the optional debug header
 * (stream numbers; the fifth is the section headers'). */
static int read_dbi(struct pdb_parse *x, const uint8_t *d, uint32_t size)
{
    if (size < 64 || rd32(d) != 0xffffffffu)
        return bad(x, "bad DBI stream header");
    uint32_t sub[6];
    uint64_t total = 64;
    for (int i = 0; i < 6; i++) { /* modules, contributions, section map, files, type servers */
        sub[i] = rd32(d + (i < 5 ? 24 + 4 * i : 52));
        total += sub[i];
    }
    uint32_t opt = rd32(d + 48);
    if (total + opt > size)
        return bad(x, "DBI substreams larger than the DBI stream");
    const uint8_t *dbg = d + total;
    int rc = read_sections(x, opt >= 12 ? rd16(dbg + 10) : 0xffff);
    if (rc)
        return rc;
    uint16_t sym_records = rd16(d + 20);
    const uint8_t *m = d + 64;
    if (x->msf.nr_streams > PDB_IPI_STREAM) { /* the inlinees' names */
        uint8_t *ipi;
        uint32_t ipi_size;
        if ((rc = ana_sym_msf_stream(&x->msf, PDB_IPI_STREAM, &ipi, &ipi_size, x->why)))
            return rc;
        if ((rc = pdb_ipi_load(&x->ipi, ipi, ipi_size)))
            return rc == -EPROTO ? bad(x, "IPI record larger than its stream") : rc;
    }
    for (uint32_t at = 0; at < sub[0];) {
        if (sub[0] - at < 65)
            return bad(x, "DBI module info cut short");
        const uint8_t *e = m + at;
        const uint8_t *nul1 = memchr(e + 64, 0, sub[0] - at - 64);
        const uint8_t *nul2 = nul1 ? memchr(nul1 + 1, 0, (size_t)(m + sub[0] - nul1 - 1)) : NULL;
        if (!nul2)
            return bad(x, "DBI module info names not ended");
        rc = read_module(x, rd16(e + 34), rd32(e + 36), rd32(e + 40), rd32(e + 44));
        if (rc)
            return rc;
        at = ((uint32_t)(nul2 + 1 - m) + 3) & ~3u;
    }
    if (sym_records == 0xffff)
        return 0;
    uint8_t *s;
    uint32_t n;
    if ((rc = ana_sym_msf_stream(&x->msf, sym_records, &s, &n, x->why)))
        return rc;
    rc = read_symbols(x, s, 0, n, true);
    free(s);
    return rc;
}

static int by_start(const void *a, const void *b)
{
    const struct pdb_func *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

static int row_by_start(const void *a, const void *b)
{
    const struct pdb_row *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

int ana_sym_pdb_parse(struct ana_sym_pdb **out, const uint8_t *data, size_t size, const uint8_t *id,
                      uint32_t id_len, const char **why)
{
    struct pdb_parse *x = calloc(1, sizeof(*x));
    uint8_t *dbi = NULL;
    uint32_t dbi_size = 0;
    int rc;

    *out = NULL;
    if (!x || !(x->p = calloc(1, sizeof(*x->p)))) {
        free(x);
        return -ENOMEM;
    }
    x->why = why;
    if ((rc = ana_sym_msf_open(&x->msf, data, size, why)))
        goto out;
    if (x->msf.nr_streams < 4) {
        rc = bad(x, "fewer streams than a PDB has");
        goto out;
    }
    if ((rc = ana_sym_msf_stream(&x->msf, 3, &dbi, &dbi_size, why)))
        goto out;
    if ((rc = read_info(x, id, id_len, dbi_size >= 12 ? rd32(dbi + 8) : 0)) ||
        (rc = read_dbi(x, dbi, dbi_size)))
        goto out;
    struct ana_sym_pdb *p = x->p;
    if (p->nr_procs)
        qsort(p->procs, p->nr_procs, sizeof(*p->procs), by_start);
    if (p->nr_pubs)
        qsort(p->pubs, p->nr_pubs, sizeof(*p->pubs), by_start);
    if (p->nr_rows)
        qsort(p->rows, p->nr_rows, sizeof(*p->rows), row_by_start);
    for (size_t i = 0; i + 1 < p->nr_rows; i++) /* a row ends where the next begins */
        if (p->rows[i + 1].start < p->rows[i].end)
            p->rows[i].end = p->rows[i + 1].start;
    /* A public symbol ends at the next one, or at its section's end. */
    for (size_t i = 0; i < p->nr_pubs; i++) {
        uint32_t end = i + 1 < p->nr_pubs ? p->pubs[i + 1].start : 0;
        for (uint32_t k = 0; k < x->nr_sec; k++)
            if (p->pubs[i].start >= x->sec_va[k] && p->pubs[i].start < x->sec_end[k] &&
                (!end || end > x->sec_end[k]))
                end = x->sec_end[k];
        p->pubs[i].end = end ? end : p->pubs[i].start + 1;
    }
    *out = p;
    x->p = NULL;
out:
    free(dbi);
    free(x->inlinees);
    pdb_ipi_free(&x->ipi);
    ana_sym_msf_close(&x->msf);
    ana_sym_pdb_close(x->p);
    free(x);
    return rc;
}

/* The last entry of v (sorted by start) starting at or before rva and
 * holding it, or NULL. */
static const struct pdb_func *func_find(const struct pdb_func *v, size_t nr, uint64_t rva)
{
    size_t lo = 0, hi = nr;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start <= rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* nested or overlapping procedures: the innermost starts last */
    for (size_t i = lo; i-- > 0 && lo - i <= 8;)
        if (rva < v[i].end)
            return &v[i];
    return NULL;
}

/* The functions inlined at rva in procedure f, innermost first. */
static void inline_chain(const struct ana_sym_pdb *p, const struct pdb_func *f, uint64_t rva,
                         struct ana_sym_pdb_hit *out)
{
    const struct pdb_inl *by_depth[ANA_SYM_PDB_MAX_INLINE] = {0};
    uint32_t deepest = 0;

    for (uint32_t i = 0; i < f->nr_inl; i++) {
        const struct pdb_inl *r = &p->inls[f->inl_first + i];
        if (rva < r->start || rva >= r->end || !r->depth || r->depth > ANA_SYM_PDB_MAX_INLINE)
            continue;
        by_depth[r->depth - 1] = r;
        deepest = r->depth > deepest ? r->depth : deepest;
    }
    /* innermost first; a depth without a range (a gap) ends the chain */
    uint32_t whole = 0;
    while (whole < deepest && by_depth[whole])
        whole++;
    for (uint32_t d = whole; d-- > 0;) {
        const struct pdb_inl *r = by_depth[d];
        out->inl[out->nr_inline].function = r->name;
        out->inl[out->nr_inline].file = r->line ? r->file : NULL;
        out->inl[out->nr_inline].line = r->line;
        out->nr_inline++;
    }
}

int ana_sym_pdb_lookup(const struct ana_sym_pdb *p, uint64_t rva, struct ana_sym_pdb_hit *out)
{
    memset(out, 0, sizeof(*out));
    const struct pdb_func *f = func_find(p->procs, p->nr_procs, rva);
    if (!f)
        f = func_find(p->pubs, p->nr_pubs, rva);
    if (f) {
        out->function = f->name;
        out->function_rva = f->start;
        inline_chain(p, f, rva, out);
    }
    size_t lo = 0, hi = p->nr_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->rows[mid].start <= rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && rva < p->rows[lo - 1].end && p->rows[lo - 1].line) {
        out->file = p->rows[lo - 1].file;
        out->line = p->rows[lo - 1].line;
    }
    return out->function || out->file ? 0 : -ENOENT;
}

void ana_sym_pdb_close(struct ana_sym_pdb *p)
{
    if (!p)
        return;
    ana_sym_arena_free(&p->arena);
    free(p->procs);
    free(p->pubs);
    free(p->rows);
    free(p->inls);
    free(p->names);
    free(p);
}
