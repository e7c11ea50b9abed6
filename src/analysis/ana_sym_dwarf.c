/* SPDX-License-Identifier: MIT */
/* Source line and inline chain of an address from DWARF, through libdw.
 *
 * dwarf_getscopes() walks a compile unit's DIE tree from its root on every
 * call, which in a C++ unit full of library headers means thousands of
 * sibling DIEs per address. Instead, each compile unit gets an index the
 * first time an address falls in it: every subprogram and inlined
 * subroutine range, sorted, with its enclosing function. An address then
 * costs a binary search plus libdw's own (cached) line-table search. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ana_sym_internal.h"

#define NO_PARENT UINT32_MAX

struct fn_entry {
    Dwarf_Off die;   /* the subprogram or inlined_subroutine DIE */
    uint64_t low;    /* lowest address of any of its ranges */
    uint32_t parent; /* enclosing entry; NO_PARENT at a subprogram */
    bool inlined;    /* DW_TAG_inlined_subroutine */
};

struct fn_range {
    uint64_t lo, hi;
    uint32_t entry;
    uint32_t depth; /* nesting depth: among ranges starting together, outer first */
};

struct cu_index {
    Dwarf_Die cudie;
    bool built;
    struct fn_entry *entries;
    size_t nr_entries, cap_entries;
    struct fn_range *ranges;
    uint64_t *max_hi; /* max_hi[i] = max(ranges[0..i].hi): where a backward scan can stop */
    size_t nr_ranges, cap_ranges;
    Dwarf_Files *files; /* for DW_AT_call_file */
    size_t nr_files;
    bool files_loaded;
};

struct cu_span {
    uint64_t lo, hi;
    uint32_t cu;
};

struct ana_sym_dwarf {
    Dwarf *dw;
    struct cu_index *cus;
    size_t nr_cus;
    struct cu_span *spans; /* sorted by lo */
    size_t nr_spans;
};

static int grow(void **v, size_t *cap, size_t nr, size_t elem)
{
    if (nr < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *nv = realloc(*v, ncap * elem);

    if (!nv)
        return -ENOMEM;
    *v = nv;
    *cap = ncap;
    return 0;
}

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
        if (grow((void **)&d->cus, &cap_cus, d->nr_cus, sizeof(*d->cus)))
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
            if (grow((void **)&d->spans, &cap_spans, d->nr_spans, sizeof(*d->spans)))
                return -ENOMEM;
            d->spans[d->nr_spans++] = (struct cu_span){.lo = start, .hi = end, .cu = idx};
        }
    }
    if (d->nr_spans)
        qsort(d->spans, d->nr_spans, sizeof(*d->spans), span_cmp);
    return 0;
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
    int rc = index_units(d);
    if (rc) {
        ana_sym_dwarf_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

static int add_entry(struct cu_index *ci, Dwarf_Die *die, uint32_t parent, uint32_t depth, bool inlined,
                     uint32_t *entry)
{
    Dwarf_Addr base, start, end;
    ptrdiff_t off = 0;
    uint64_t low = UINT64_MAX;
    uint32_t idx = (uint32_t)ci->nr_entries;
    size_t first_range = ci->nr_ranges;

    while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
        if (start >= end)
            continue;
        if (grow((void **)&ci->ranges, &ci->cap_ranges, ci->nr_ranges, sizeof(*ci->ranges)))
            return -ENOMEM;
        ci->ranges[ci->nr_ranges++] = (struct fn_range){.lo = start, .hi = end, .entry = idx, .depth = depth};
        if (start < low)
            low = start;
    }
    if (ci->nr_ranges == first_range) {
        *entry = NO_PARENT; /* a declaration or an abstract instance: no code */
        return 0;
    }
    if (grow((void **)&ci->entries, &ci->cap_entries, ci->nr_entries, sizeof(*ci->entries)))
        return -ENOMEM;
    ci->entries[ci->nr_entries++] =
        (struct fn_entry){.die = dwarf_dieoffset(die), .low = low, .parent = parent, .inlined = inlined};
    *entry = idx;
    return 0;
}

/* Collect the code-carrying DIEs under `parent_die`. Only tags that can
 * hold functions are entered: namespaces, functions, lexical blocks. Type
 * DIEs are skipped whole (GCC and clang put member function bodies at
 * namespace level, pointing back with DW_AT_specification). */
static int walk(struct cu_index *ci, Dwarf_Die *parent_die, uint32_t parent, uint32_t depth)
{
    Dwarf_Die child;
    int rc = 0;

    if (depth > 256 || dwarf_child(parent_die, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        uint32_t entry;

        switch (tag) {
        case DW_TAG_subprogram:
        case DW_TAG_inlined_subroutine:
            rc = add_entry(ci, &child, tag == DW_TAG_inlined_subroutine ? parent : NO_PARENT, depth,
                           tag == DW_TAG_inlined_subroutine, &entry);
            if (!rc && entry != NO_PARENT)
                rc = walk(ci, &child, entry, depth + 1);
            break;
        case DW_TAG_lexical_block:
        case DW_TAG_namespace:
        case DW_TAG_module:
            rc = walk(ci, &child, parent, depth + 1);
            break;
        default:
            break;
        }
    } while (!rc && dwarf_siblingof(&child, &child) == 0);
    return rc;
}

static int range_cmp(const void *pa, const void *pb)
{
    const struct fn_range *a = pa, *b = pb;

    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->depth < b->depth ? -1 : a->depth > b->depth;
}

static int build_cu(struct cu_index *ci)
{
    int rc = walk(ci, &ci->cudie, NO_PARENT, 0);

    if (rc)
        return rc;
    if (ci->nr_ranges) {
        qsort(ci->ranges, ci->nr_ranges, sizeof(*ci->ranges), range_cmp);
        ci->max_hi = malloc(ci->nr_ranges * sizeof(*ci->max_hi));
        if (!ci->max_hi)
            return -ENOMEM;
        uint64_t m = 0;
        for (size_t i = 0; i < ci->nr_ranges; i++) {
            if (ci->ranges[i].hi > m)
                m = ci->ranges[i].hi;
            ci->max_hi[i] = m;
        }
    }
    ci->built = true;
    return 0;
}

static struct cu_index *find_cu(struct ana_sym_dwarf *d, uint64_t pc)
{
    size_t lo = 0, hi = d->nr_spans;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (d->spans[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Units may overlap (a unit whose range list spans others' code, as
     * with -ffunction-sections and LTO): try a few before. */
    for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
        if (pc < d->spans[lo - 1].hi)
            return &d->cus[d->spans[lo - 1].cu];
    }
    return NULL;
}

/* The innermost entry whose range holds pc, or NO_PARENT. */
static uint32_t innermost(const struct cu_index *ci, uint64_t pc)
{
    size_t lo = 0, hi = ci->nr_ranges;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (ci->ranges[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Ranges nest, and among those holding pc the innermost starts last
     * (ties: deeper sorts later), so the first hit going back is it. */
    while (lo > 0 && ci->max_hi[lo - 1] > pc) {
        const struct fn_range *r = &ci->ranges[lo - 1];

        if (pc < r->hi)
            return r->entry;
        lo--;
    }
    return NO_PARENT;
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

static const char *call_file(struct cu_index *ci, Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Word idx;

    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) != 0)
        return NULL;
    if (!ci->files_loaded) {
        ci->files_loaded = true;
        if (dwarf_getsrcfiles(&ci->cudie, &ci->files, &ci->nr_files) != 0)
            ci->files = NULL;
    }
    if (!ci->files || idx >= ci->nr_files)
        return NULL;
    return dwarf_filesrc(ci->files, idx, NULL, NULL);
}

static void line_at(struct cu_index *ci, uint64_t pc, const char **file, uint32_t *line, uint32_t *column)
{
    Dwarf_Line *l = dwarf_getsrc_die(&ci->cudie, pc);
    int n = 0, c = 0;

    *file = NULL;
    *line = *column = 0;
    if (!l)
        return;
    *file = dwarf_linesrc(l, NULL, NULL);
    if (dwarf_lineno(l, &n) == 0 && n > 0)
        *line = (uint32_t)n;
    if (dwarf_linecol(l, &c) == 0 && c > 0)
        *column = (uint32_t)c;
}

int ana_sym_dwarf_lookup(struct ana_sym_dwarf *d, uint64_t pc, struct ana_sym_dwarf_chain *out)
{
    struct cu_index *ci = find_cu(d, pc);

    out->nr_frames = 0;
    out->file = NULL;
    out->line = out->column = 0;
    out->outer_low = 0;
    if (!ci)
        return -ENOENT;
    if (!ci->built) {
        int rc = build_cu(ci);
        if (rc)
            return rc;
    }
    line_at(ci, pc, &out->file, &out->line, &out->column);

    uint32_t e = ci->nr_ranges ? innermost(ci, pc) : NO_PARENT;
    const char *file = out->file;
    uint32_t line = out->line, column = out->column;

    /* Innermost first: each frame's position is where the frame inside it
     * was called from (DW_AT_call_*), the innermost's the line table's. */
    while (e != NO_PARENT && out->nr_frames < ANA_SYM_MAX_INLINE) {
        const struct fn_entry *fe = &ci->entries[e];
        Dwarf_Die die;

        if (!dwarf_offdie(d->dw, fe->die, &die))
            break;
        struct ana_sym_dwarf_frame *f = &out->frames[out->nr_frames++];
        f->name = die_name(&die);
        f->file = file;
        f->line = line;
        f->column = column;
        out->outer_low = fe->low;
        if (!fe->inlined)
            break;
        file = call_file(ci, &die);
        line = die_udata(&die, DW_AT_call_line);
        column = die_udata(&die, DW_AT_call_column);
        e = fe->parent;
    }
    return 0;
}

void ana_sym_dwarf_close(struct ana_sym_dwarf *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nr_cus; i++) {
        free(d->cus[i].entries);
        free(d->cus[i].ranges);
        free(d->cus[i].max_hi);
    }
    free(d->cus);
    free(d->spans);
    if (d->dw)
        dwarf_end(d->dw);
    free(d);
}
