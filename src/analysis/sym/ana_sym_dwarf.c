/* SPDX-License-Identifier: MIT */
/* Source line and inline chain of an address from DWARF, through libdw.
 *
 * dwarf_getscopes() walks a compile unit's DIE tree from its root on every
 * call, which in a C++ unit full of library headers means thousands of
 * sibling DIEs per address. Instead the index is built lazily, in two
 * levels: the first address in a compile unit lists its functions (the
 * subprograms with code, found at unit and namespace level, without
 * entering their bodies); the first address in a function lists the
 * inlined subroutines in its body. Each level is a sorted range array, so
 * an address costs two binary searches plus libdw's own (cached) search of
 * the line table, and a function nobody's stack passes through is never
 * read beyond its first DIE. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"
#include "util/util_array.h"
#include "util/util_search.h"

#define NO_PARENT UINT32_MAX
#define MAX_DIE_DEPTH 256

struct fn_range {
    uint64_t lo, hi;
    uint32_t entry; /* index into the level's entries */
};

/* A sorted range array with the prefix maximum of the ends. */
struct range_set {
    struct fn_range *v;
    uint64_t *max_hi; /* max_hi[i] = max(v[0..i].hi): where a backward scan can stop */
    size_t nr, cap;
};

/* One inlined subroutine of a function's body (entry 0: the function). */
struct inl_entry {
    Dwarf_Off die;
    uint32_t parent; /* enclosing entry; NO_PARENT for entry 0 */
};

struct body {
    struct inl_entry *entries;
    size_t nr_entries, cap_entries;
    struct range_set ranges;
};

/* A function with code at unit or namespace level (or, after the deep
 * pass, nested in another function's body). */
struct top_fn {
    Dwarf_Off die;
    uint64_t low;      /* lowest address of its ranges */
    struct body *body; /* NULL until PATH_LOOKUPS addresses fell in it */
    uint32_t nr_lookups;
};

/* The first addresses of a function are looked up by walking down from
 * its DIE along the inlined calls that hold the address, which visits the
 * siblings on that path only; after this many, the whole body is indexed.
 * A trace's stacks touch most functions at a few addresses (a 16-unit C++
 * program's run: 7 per function), where indexing bodies full of inlined
 * library code cost more than all the rest together. */
#ifndef ANA_SYM_PATH_LOOKUPS /* -D for tests: 0 always indexes, huge never */
#define ANA_SYM_PATH_LOOKUPS 8
#endif
#define PATH_LOOKUPS ANA_SYM_PATH_LOOKUPS

struct cu_index {
    Dwarf_Die cudie;
    bool built; /* functions listed */
    bool deep;  /* bodies searched for nested functions too */
    struct top_fn *fns;
    size_t nr_fns, cap_fns;
    struct range_set ranges; /* entry: index into fns */
    /* Line table: our decoder's, or libdw's when ours gives up. */
    struct ana_sym_lines *lines;
    int lines_state;    /* 0: not read yet, 1: ours, -1: libdw's */
    Dwarf_Files *files; /* libdw's, for DW_AT_call_file */
    size_t nr_files;
    bool files_loaded;
};

struct cu_span {
    uint64_t lo, hi;
    uint32_t cu;
};

struct ana_sym_dwarf {
    Dwarf *dw;
    struct ana_sym_sections sec;
    struct ana_sym_arena arena; /* joined source paths */
    struct cu_index *cus;
    size_t nr_cus;
    struct cu_span *spans; /* sorted by lo */
    size_t nr_spans;
};

static int span_cmp(const void *pa, const void *pb)
{
    const struct cu_span *a = pa, *b = pb;

    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Every compile unit's address ranges, from the units themselves: GCC may
 * leave out .debug_aranges, and dwarf_addrdie() depends on it. */
static int index_units(struct ana_sym_dwarf *d)
{
    Dwarf_CU *cu = NULL, *next;
    Dwarf_Die cudie;
    uint8_t unit_type;
    size_t cap_cus = 0, cap_spans = 0;

    while (dwarf_get_units(d->dw, cu, &next, NULL, &unit_type, &cudie, NULL) == 0) {
        cu = next;
        if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
            continue;
        if (UTIL_ARRAY_RESERVE(d->cus, cap_cus, d->nr_cus + 1, 16))
            return -ENOMEM;
        uint32_t idx = (uint32_t)d->nr_cus;
        memset(&d->cus[idx], 0, sizeof(d->cus[idx]));
        d->cus[idx].cudie = cudie;
        d->nr_cus++;

        Dwarf_Addr base, start, end;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
            if (start >= end)
                continue;
            if (UTIL_ARRAY_RESERVE(d->spans, cap_spans, d->nr_spans + 1, 16))
                return -ENOMEM;
            d->spans[d->nr_spans++] = (struct cu_span){.lo = start, .hi = end, .cu = idx};
        }
    }
    if (d->nr_spans)
        qsort(d->spans, d->nr_spans, sizeof(*d->spans), span_cmp);
    return 0;
}

/* The sections our line decoder reads. dwarf_begin_elf() has already
 * decompressed SHF_COMPRESSED sections in place; doing it again is a
 * no-op, and covers a file libdw opened some other way. */
static void find_sections(Elf *elf, struct ana_sym_sections *sec)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;

    memset(sec, 0, sizeof(*sec));
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        const char *name;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
            !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
            continue;
        const uint8_t **p = NULL;
        size_t *size = NULL;
        if (!strcmp(name, ".debug_line"))
            p = &sec->line, size = &sec->line_size;
        else if (!strcmp(name, ".debug_line_str"))
            p = &sec->line_str, size = &sec->line_str_size;
        else if (!strcmp(name, ".debug_str"))
            p = &sec->str, size = &sec->str_size;
        else
            continue; /* .zdebug_* (old GNU compression) is left to libdw */
        if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (data && data->d_buf) {
            *p = data->d_buf;
            *size = data->d_size;
        }
    }
}

int ana_sym_dwarf_open(struct ana_sym_dwarf **out, Elf *elf)
{
    if (!ana_sym_elf_has_dwarf(elf))
        return -ENODATA;
    struct ana_sym_dwarf *d = calloc(1, sizeof(*d));

    if (!d)
        return -ENOMEM;
    d->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!d->dw) {
        free(d);
        return -ENODATA;
    }
    find_sections(elf, &d->sec);
    int rc = index_units(d);
    if (rc) {
        ana_sym_dwarf_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* ---- range sets */

/* Does the DIE carry code? Asking the abbreviation is far cheaper than
 * dwarf_ranges() on the thousands of declarations a C++ unit holds. */
static bool has_code(Dwarf_Die *die)
{
    return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Append the DIE's ranges for entry; returns how many, or -ENOMEM. */
static int add_ranges(struct range_set *rs, Dwarf_Die *die, uint32_t entry, uint64_t *low)
{
    Dwarf_Addr base, start, end;
    ptrdiff_t off = 0;
    int n = 0;

    *low = UINT64_MAX;
    while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
        if (start >= end)
            continue;
        if (UTIL_ARRAY_RESERVE(rs->v, rs->cap, rs->nr + 1, 16))
            return -ENOMEM;
        rs->v[rs->nr++] = (struct fn_range){.lo = start, .hi = end, .entry = entry};
        if (start < *low)
            *low = start;
        n++;
    }
    return n;
}

/* Stable sort by lo. Ranges are appended in DIE order, an inlined call
 * after the one it sits in, so among ranges starting at one address the
 * innermost stays last. LSD radix sort, 8 bits a pass over the bits that
 * differ: glibc's qsort (a merge sort calling a comparator) was a fifth of
 * the time of indexing a large C++ unit. */
static int sort_ranges(struct range_set *rs)
{
    size_t n = rs->nr;

    free(rs->max_hi);
    rs->max_hi = NULL;
    if (n == 0)
        return 0;
    uint64_t min = UINT64_MAX, max = 0;
    for (size_t i = 0; i < n; i++) {
        min = rs->v[i].lo < min ? rs->v[i].lo : min;
        max = rs->v[i].lo > max ? rs->v[i].lo : max;
    }
    if (n < 32) {
        for (size_t i = 1; i < n; i++) {
            struct fn_range x = rs->v[i];
            size_t j = i;
            for (; j > 0 && rs->v[j - 1].lo > x.lo; j--)
                rs->v[j] = rs->v[j - 1];
            rs->v[j] = x;
        }
    } else if (max > min) {
        struct fn_range *tmp = malloc(n * sizeof(*tmp));
        if (!tmp)
            return -ENOMEM;
        uint64_t span = max - min;
        for (unsigned shift = 0; shift < 64 && (span >> shift); shift += 8) {
            size_t count[257] = {0};
            for (size_t i = 0; i < n; i++)
                count[((rs->v[i].lo - min) >> shift & 0xff) + 1]++;
            for (size_t b = 1; b < 257; b++)
                count[b] += count[b - 1];
            for (size_t i = 0; i < n; i++)
                tmp[count[(rs->v[i].lo - min) >> shift & 0xff]++] = rs->v[i];
            struct fn_range *t = rs->v;
            rs->v = tmp;
            tmp = t;
        }
        free(tmp);
    }
    rs->max_hi = malloc(n * sizeof(*rs->max_hi));
    if (!rs->max_hi)
        return -ENOMEM;
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (rs->v[i].hi > m)
            m = rs->v[i].hi;
        rs->max_hi[i] = m;
    }
    return 0;
}

/* The innermost range holding pc, or NULL. Ranges nest, and among those
 * holding pc the innermost starts last (ties: it sorts later), so the
 * first hit going back is it. */
static const struct fn_range *range_find(const struct range_set *rs, uint64_t pc)
{
    size_t lo = util_search_above(rs->v, rs->nr, sizeof(*rs->v), offsetof(struct fn_range, lo), pc);

    while (lo > 0 && rs->max_hi[lo - 1] > pc) {
        if (pc < rs->v[lo - 1].hi)
            return &rs->v[lo - 1];
        lo--;
    }
    return NULL;
}

static void range_set_free(struct range_set *rs)
{
    free(rs->v);
    free(rs->max_hi);
}

/* ---- level 1: a unit's functions */

static int add_top_fn(struct cu_index *ci, Dwarf_Die *die)
{
    uint64_t low;
    int n = add_ranges(&ci->ranges, die, (uint32_t)ci->nr_fns, &low);

    if (n <= 0)
        return n;
    if (UTIL_ARRAY_RESERVE(ci->fns, ci->cap_fns, ci->nr_fns + 1, 16))
        return -ENOMEM;
    ci->fns[ci->nr_fns++] = (struct top_fn){.die = dwarf_dieoffset(die), .low = low};
    return 0;
}

/* Functions under parent_die. Namespaces are entered; type DIEs are
 * skipped whole (GCC and clang put member function bodies at namespace
 * level, pointing back with DW_AT_specification). With deep set, bodies
 * are entered too, for functions nested in others (GNU C nested
 * functions, local classes). */
static int walk_fns(struct cu_index *ci, Dwarf_Die *parent_die, unsigned depth, bool deep,
                    bool in_body)
{
    Dwarf_Die child;
    int rc = 0;

    if (depth > MAX_DIE_DEPTH || dwarf_child(parent_die, &child) != 0)
        return 0;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
            if (!has_code(&child))
                break;
            /* Top-level functions are listed by the first pass. */
            if (in_body || !deep)
                rc = add_top_fn(ci, &child);
            if (!rc && deep)
                rc = walk_fns(ci, &child, depth + 1, deep, true);
            break;
        case DW_TAG_namespace:
        case DW_TAG_module:
            rc = walk_fns(ci, &child, depth + 1, deep, in_body);
            break;
        case DW_TAG_lexical_block:
        case DW_TAG_inlined_subroutine:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
            if (in_body)
                rc = walk_fns(ci, &child, depth + 1, deep, true);
            break;
        default:
            break;
        }
    } while (!rc && dwarf_siblingof(&child, &child) == 0);
    return rc;
}

static int build_cu(struct cu_index *ci, bool deep)
{
    int rc = walk_fns(ci, &ci->cudie, 0, deep, false);

    if (!rc)
        rc = sort_ranges(&ci->ranges);
    if (!rc) {
        ci->built = true;
        ci->deep |= deep;
    }
    return rc;
}

/* ---- level 2: a function's inlined calls */

static int walk_body(struct body *b, Dwarf_Die *parent_die, uint32_t parent, unsigned depth)
{
    Dwarf_Die child;
    int rc = 0;

    if (depth > MAX_DIE_DEPTH || dwarf_child(parent_die, &child) != 0)
        return 0;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_inlined_subroutine: {
            uint64_t low;
            uint32_t idx = (uint32_t)b->nr_entries;
            int n = add_ranges(&b->ranges, &child, idx, &low);
            if (n < 0)
                return n;
            if (n == 0)
                break;
            if (UTIL_ARRAY_RESERVE(b->entries, b->cap_entries, b->nr_entries + 1, 16))
                return -ENOMEM;
            b->entries[b->nr_entries++] =
                (struct inl_entry){.die = dwarf_dieoffset(&child), .parent = parent};
            rc = walk_body(b, &child, idx, depth + 1);
            break;
        }
        case DW_TAG_lexical_block:
            rc = walk_body(b, &child, parent, depth + 1);
            break;
        default:
            break; /* nested functions are level 1's (deep pass) */
        }
    } while (!rc && dwarf_siblingof(&child, &child) == 0);
    return rc;
}

static void body_free(struct body *b)
{
    if (!b)
        return;
    free(b->entries);
    range_set_free(&b->ranges);
    free(b);
}

static int build_body(struct ana_sym_dwarf *d, struct top_fn *fn)
{
    struct body *b = calloc(1, sizeof(*b));
    Dwarf_Die die;
    int rc = -ENOMEM;

    if (!b)
        return -ENOMEM;
    b->entries = malloc(sizeof(*b->entries));
    if (!b->entries)
        goto fail;
    b->cap_entries = 1;
    b->entries[0] = (struct inl_entry){.die = fn->die, .parent = NO_PARENT};
    b->nr_entries = 1;
    if (dwarf_offdie(d->dw, fn->die, &die)) {
        rc = walk_body(b, &die, 0, 0);
        if (rc)
            goto fail;
    }
    rc = sort_ranges(&b->ranges);
    if (rc)
        goto fail;
    fn->body = b;
    return 0;
fail:
    body_free(b);
    return rc;
}

static struct cu_index *find_cu(struct ana_sym_dwarf *d, uint64_t pc)
{
    size_t lo = util_search_above(d->spans, d->nr_spans, sizeof(*d->spans),
                                  offsetof(struct cu_span, lo), pc);

    /* Units may overlap (a unit whose range list spans others' code, as
     * with -ffunction-sections and LTO): try a few before. */
    for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
        if (pc < d->spans[lo - 1].hi)
            return &d->cus[d->spans[lo - 1].cu];
    }
    return NULL;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

    if (!name)
        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    if (!name)
        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
    return name;
}

static uint32_t die_udata(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute attr;
    Dwarf_Word w;

    if (dwarf_formudata(dwarf_attr(die, name, &attr), &w) != 0)
        return 0;
    return w > UINT32_MAX ? 0 : (uint32_t)w;
}

/* Decode the unit's line table with our decoder on first use; if it gives
 * up, libdw's is used for this unit. */
static void load_lines(struct ana_sym_dwarf *d, struct cu_index *ci)
{
    Dwarf_Attribute attr;
    Dwarf_Word off;

    ci->lines_state = -1;
    if (dwarf_formudata(dwarf_attr(&ci->cudie, DW_AT_stmt_list, &attr), &off) != 0)
        return;
    const char *comp_dir = dwarf_formstring(dwarf_attr(&ci->cudie, DW_AT_comp_dir, &attr));
    if (ana_sym_lines_decode(&ci->lines, &d->sec, off, comp_dir) == 0)
        ci->lines_state = 1;
}

static const char *call_file(struct ana_sym_dwarf *d, struct cu_index *ci, Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Word idx;

    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) != 0)
        return NULL;
    if (ci->lines_state == 1)
        return ana_sym_lines_file(ci->lines, &d->arena, idx);
    if (!ci->files_loaded) {
        ci->files_loaded = true;
        if (dwarf_getsrcfiles(&ci->cudie, &ci->files, &ci->nr_files) != 0)
            ci->files = NULL;
    }
    if (!ci->files || idx >= ci->nr_files)
        return NULL;
    return dwarf_filesrc(ci->files, idx, NULL, NULL);
}

static void line_at(struct ana_sym_dwarf *d, struct cu_index *ci, uint64_t pc, const char **file,
                    uint32_t *line, uint32_t *column)
{
    *file = NULL;
    *line = *column = 0;
    if (!ci->lines_state)
        load_lines(d, ci);
    if (ci->lines_state == 1) {
        uint32_t f;
        if (ana_sym_lines_find(ci->lines, pc, &f, line, column) == 0)
            *file = ana_sym_lines_file(ci->lines, &d->arena, f);
        return;
    }
    Dwarf_Line *l = dwarf_getsrc_die(&ci->cudie, pc);
    int n = 0, c = 0;

    if (!l)
        return;
    *file = dwarf_linesrc(l, NULL, NULL);
    if (dwarf_lineno(l, &n) == 0 && n > 0)
        *line = (uint32_t)n;
    if (dwarf_linecol(l, &c) == 0 && c > 0)
        *column = (uint32_t)c;
}

/* The function of the unit holding pc: listed on the unit's first
 * address; if pc is in none, maybe in a function nested in another's body,
 * which only a deep pass (once per unit) finds. */
static int find_fn(struct cu_index *ci, uint64_t pc, struct top_fn **out)
{
    const struct fn_range *r;
    int rc;

    *out = NULL;
    if (!ci->built && (rc = build_cu(ci, false)))
        return rc;
    r = range_find(&ci->ranges, pc);
    if (!r && !ci->deep) {
        if ((rc = build_cu(ci, true)))
            return rc;
        r = range_find(&ci->ranges, pc);
    }
    if (r)
        *out = &ci->fns[r->entry];
    return 0;
}

/* The DIEs holding pc from fn down: fn, then each inlined call inside
 * the previous one. Returns how many (up to max; the innermost are kept
 * when deeper). */
static size_t path_to(struct ana_sym_dwarf *d, const struct top_fn *fn, uint64_t pc,
                      Dwarf_Off *path, size_t max)
{
    Dwarf_Die cur, child;
    size_t n = 0;
    unsigned depth = 0;

    if (!dwarf_offdie(d->dw, fn->die, &cur))
        return 0;
    path[n++] = fn->die;
    while (depth++ < MAX_DIE_DEPTH && dwarf_child(&cur, &child) == 0) {
        bool down = false;
        do {
            int tag = dwarf_tag(&child);
            if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
                has_code(&child) && dwarf_haspc(&child, pc) == 1) {
                if (tag == DW_TAG_inlined_subroutine) {
                    if (n == max) { /* keep the innermost */
                        memmove(path, path + 1, (max - 1) * sizeof(*path));
                        n--;
                    }
                    path[n++] = dwarf_dieoffset(&child);
                }
                down = true;
                break;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
        if (!down)
            break;
        cur = child;
    }
    return n;
}

int ana_sym_dwarf_lookup(struct ana_sym_dwarf *d, uint64_t pc, struct ana_sym_dwarf_chain *out)
{
    struct cu_index *ci = find_cu(d, pc);
    struct top_fn *fn;
    Dwarf_Off path[ANA_SYM_MAX_INLINE];
    size_t nr_path = 0;
    int rc;

    out->nr_frames = 0;
    out->file = NULL;
    out->line = out->column = 0;
    out->outer_low = 0;
    if (!ci)
        return -ENOENT;
    line_at(d, ci, pc, &out->file, &out->line, &out->column);
    if ((rc = find_fn(ci, pc, &fn)) || !fn)
        return rc;
    out->outer_low = fn->low;

    /* The DIEs to name, innermost first. */
    if (!fn->body && fn->nr_lookups < PATH_LOOKUPS) {
        fn->nr_lookups++;
        size_t n = path_to(d, fn, pc, path, ANA_SYM_MAX_INLINE);
        for (size_t i = 0; i < n / 2; i++) {
            Dwarf_Off t = path[i];
            path[i] = path[n - 1 - i];
            path[n - 1 - i] = t;
        }
        nr_path = n;
    } else {
        if (!fn->body && (rc = build_body(d, fn)))
            return rc;
        const struct fn_range *r = range_find(&fn->body->ranges, pc);
        for (uint32_t e = r ? r->entry : 0; e != NO_PARENT && nr_path < ANA_SYM_MAX_INLINE;
             e = fn->body->entries[e].parent)
            path[nr_path++] = fn->body->entries[e].die;
    }

    const char *file = out->file;
    uint32_t line = out->line, column = out->column;

    /* Each frame's position is where the frame inside it was called from
     * (DW_AT_call_*), the innermost's the line table's. */
    for (size_t i = 0; i < nr_path; i++) {
        Dwarf_Die die;

        if (!dwarf_offdie(d->dw, path[i], &die))
            break;
        struct ana_sym_dwarf_frame *f = &out->frames[out->nr_frames++];
        f->name = die_name(&die);
        f->file = file;
        f->line = line;
        f->column = column;
        file = call_file(d, ci, &die);
        line = die_udata(&die, DW_AT_call_line);
        column = die_udata(&die, DW_AT_call_column);
    }
    return 0;
}

void ana_sym_dwarf_close(struct ana_sym_dwarf *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nr_cus; i++) {
        struct cu_index *ci = &d->cus[i];

        for (size_t k = 0; k < ci->nr_fns; k++)
            body_free(ci->fns[k].body);
        free(ci->fns);
        range_set_free(&ci->ranges);
        ana_sym_lines_free(ci->lines);
    }
    free(d->cus);
    free(d->spans);
    ana_sym_arena_free(&d->arena);
    if (d->dw)
        dwarf_end(d->dw);
    free(d);
}
