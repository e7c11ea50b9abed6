/* SPDX-License-Identifier: MIT */
/* A PDB's functions and lines, read offline (docs/windows.md, "Symbols"):
 * the PDB info stream (GUID, age, the named stream "/names"), the DBI
 * stream's module list and section headers, each module's symbol stream
 * (S_GPROC32/S_LPROC32 and their _ID forms: name, section, offset, size)
 * and its C13 line information (DEBUG_S_LINES rows, DEBUG_S_FILECHKSMS
 * entries naming files in "/names"), and the public symbols (S_PUB32) for
 * code without debug info. Everything is turned into two tables sorted by
 * RVA. Inline sites are not read: an inlined call shows as the function
 * it was inlined into, at the line of the inlined code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"

#define S_PUB32 0x110e
#define S_LPROC32 0x110f
#define S_GPROC32 0x1110
#define S_LPROC32_ID 0x1146
#define S_GPROC32_ID 0x1147
#define DEBUG_S_LINES 0xf2
#define DEBUG_S_FILECHKSMS 0xf4
#define SCN_MEM_EXECUTE 0x20000000u
#define PDB_MAX_SECTIONS 4096

struct pdb_func {
    uint32_t start, end; /* end 0: a public symbol, it ends where the next one starts */
    const char *name;
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

/* The C13 subsections of one module: the checksums first (the rows name
 * files by their offset there), then the lines. */
static int read_c13(struct pdb_parse *x, const uint8_t *c, uint32_t len)
{
    const uint8_t *chk = NULL;
    uint32_t chk_len = 0;

    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t at = 0; at + 8 <= len;) {
            uint32_t kind = rd32(c + at) & 0x7fffffffu, n = rd32(c + at + 4);
            if (n > len - at - 8)
                return bad(x, "C13 line subsection larger than its module stream");
            if (pass == 0 && kind == DEBUG_S_FILECHKSMS) {
                chk = c + at + 8;
                chk_len = n;
            } else if (pass == 1 && kind == DEBUG_S_LINES) {
                int rc = read_lines(x, c + at + 8, n, chk, chk_len);
                if (rc)
                    return rc;
            }
            at += 8 + ((n + 3) & ~3u);
        }
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
            if (rva)
                rc = add_func(x, false, rva, rd32(d + 12), d + 35, dlen - 35);
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
    if (!rc && sym_bytes)
        rc = read_symbols(x, s, 4, sym_bytes, false);
    if (!rc)
        rc = read_c13(x, s + sym_bytes + c11_bytes, c13_bytes);
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

int ana_sym_pdb_lookup(const struct ana_sym_pdb *p, uint64_t rva, struct ana_sym_pdb_hit *out)
{
    memset(out, 0, sizeof(*out));
    const struct pdb_func *f = func_find(p->procs, p->nr_procs, rva);
    if (!f)
        f = func_find(p->pubs, p->nr_pubs, rva);
    if (f) {
        out->function = f->name;
        out->function_rva = f->start;
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
    free(p->names);
    free(p);
}
