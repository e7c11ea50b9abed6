/* SPDX-License-Identifier: MIT */
/* A module's function symbols sorted by address, built once per module.
 * libdw's own dwfl_module_addrname scans the whole symbol table for every
 * address (~110 us in libc, measured); a binary search here costs ~50 ns. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"
#include "util/util_array.h"
#include "util/util_search.h"

/* A candidate before aliases are merged: what decides which of several
 * names at one address is shown. */
struct cand {
    uint64_t addr;
    uint64_t size;
    uint64_t section_end; /* end of the symbol's section: bounds a size-0 symbol */
    const char *name;
    uint8_t type;
    uint8_t bind;
};

struct cand_vec {
    struct cand *v;
    size_t nr, cap;
};

static int cand_push(struct cand_vec *cv, const struct cand *c)
{
    if (UTIL_ARRAY_RESERVE(cv->v, cv->cap, (size_t)cv->nr + 1, 1024))
        return -ENOMEM;
    cv->v[cv->nr++] = *c;
    return 0;
}

static unsigned bind_rank(uint8_t bind)
{
    return bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
}

static size_t leading_underscores(const char *s)
{
    size_t n = 0;

    while (s[n] == '_')
        n++;
    return n;
}

/* Order: by address, then the preferred alias first. The preference is
 * what a reader expects to see: a sized function over a bare label, a
 * global over a local alias (malloc over __GI___libc_malloc), the public
 * spelling (fewest leading underscores: malloc over __libc_malloc), the
 * shorter name, and finally the name itself so the choice is stable. */
static int cand_cmp(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;

    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if ((a->size > 0) != (b->size > 0))
        return a->size > 0 ? -1 : 1;
    if ((a->type == STT_NOTYPE) != (b->type == STT_NOTYPE))
        return a->type == STT_NOTYPE ? 1 : -1;
    if (bind_rank(a->bind) != bind_rank(b->bind))
        return bind_rank(a->bind) > bind_rank(b->bind) ? -1 : 1;
    size_t ua = leading_underscores(a->name), ub = leading_underscores(b->name);
    if (ua != ub)
        return ua < ub ? -1 : 1;
    size_t la = strlen(a->name), lb = strlen(b->name);
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Collect the function symbols of one symbol table section. */
static int collect_section(struct cand_vec *cv, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *data = elf_getdata(scn, NULL);

    if (!data || sh->sh_entsize == 0)
        return 0;
    size_t nr = sh->sh_size / sh->sh_entsize;

    for (size_t i = 0; i < nr; i++) {
        GElf_Sym sym;

        if (!gelf_getsym(data, (int)i, &sym))
            break;
        unsigned type = GELF_ST_TYPE(sym.st_info);
        if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
            continue;
        if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || sym.st_value == 0)
            continue;
        GElf_Shdr tsh;
        Elf_Scn *tscn = elf_getscn(elf, sym.st_shndx);
        if (!tscn || !gelf_getshdr(tscn, &tsh) || !(tsh.sh_flags & SHF_ALLOC))
            continue;
        /* A bare label counts only in code: data labels are not functions. */
        if (type == STT_NOTYPE && !(tsh.sh_flags & SHF_EXECINSTR))
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (!name || !name[0] || name[0] == '$')
            continue;
        struct cand c = {
            .addr = sym.st_value,
            .size = sym.st_size,
            .section_end = tsh.sh_addr + tsh.sh_size,
            .name = name,
            .type = (uint8_t)type,
            .bind = (uint8_t)GELF_ST_BIND(sym.st_info),
        };
        if (cand_push(cv, &c))
            return -ENOMEM;
    }
    return 0;
}

int ana_sym_table_build(struct ana_sym_table *t, Elf *const *elfs, size_t nr_elfs)
{
    struct cand_vec cv = {0};
    int rc = 0;

    memset(t, 0, sizeof(*t));
    for (size_t e = 0; e < nr_elfs && !rc; e++) {
        Elf_Scn *scn = NULL;

        if (!elfs[e])
            continue;
        while (!rc && (scn = elf_nextscn(elfs[e], scn))) {
            GElf_Shdr sh;

            if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
                rc = collect_section(&cv, elfs[e], scn, &sh);
        }
    }
    if (rc || cv.nr == 0) {
        free(cv.v);
        return rc;
    }
    qsort(cv.v, cv.nr, sizeof(*cv.v), cand_cmp);

    t->syms = malloc(cv.nr * sizeof(*t->syms));
    if (!t->syms) {
        free(cv.v);
        return -ENOMEM;
    }
    /* Keep the first (preferred) candidate of each address. */
    size_t n = 0;
    for (size_t i = 0; i < cv.nr; i++) {
        if (i > 0 && cv.v[i].addr == cv.v[i - 1].addr)
            continue;
        size_t j = i + 1;
        while (j < cv.nr && cv.v[j].addr == cv.v[i].addr)
            j++;
        uint64_t end = cv.v[i].addr + cv.v[i].size;
        if (cv.v[i].size == 0) {
            /* No size (hand-written assembly): it runs to the next symbol,
             * but never past the end of its section. */
            end = cv.v[i].section_end;
            if (j < cv.nr && cv.v[j].addr < end)
                end = cv.v[j].addr;
        }
        t->syms[n++] =
            (struct ana_sym_symbol){.addr = cv.v[i].addr, .end = end, .name = cv.v[i].name};
    }
    free(cv.v);
    t->nr = n;
    return 0;
}

/* How many earlier symbols to try when the nearest one ends before the
 * address: a symbol nested inside a bigger one (a local label with a size
 * inside a function) must not hide the function. */
#define NESTED_LOOKBACK 8

const struct ana_sym_symbol *ana_sym_table_find(const struct ana_sym_table *t, uint64_t vaddr)
{
    /* Find the first symbol with addr > vaddr. */
    size_t lo = util_search_above(t->syms, t->nr, sizeof(*t->syms),
                                  offsetof(struct ana_sym_symbol, addr), vaddr);

    for (size_t k = 0; k < NESTED_LOOKBACK && lo > 0; k++, lo--) {
        const struct ana_sym_symbol *s = &t->syms[lo - 1];

        if (vaddr < s->end)
            return s;
    }
    return NULL;
}

void ana_sym_table_free(struct ana_sym_table *t)
{
    free(t->syms);
    t->syms = NULL;
    t->nr = 0;
}
