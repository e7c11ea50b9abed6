/* SPDX-License-Identifier: MIT */
/* Loaded objects' dynamic symbol tables, read where the loader mapped them
 * (no file access, no allocation): which object defines a name now. */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "collector/col_elf_internal.h"
#include "collector/col_internal.h"

/* GNU hash's Bloom filter words are the object's word size. */
#define COL_ELF_WORD_BITS (8 * sizeof(ElfW(Addr)))
/* .gnu.version: a symbol whose version is not its default (name@VER, not
 * name@@VER) is invisible to a lookup by plain name. */
#define COL_VERSYM_HIDDEN 0x8000

/* A d_ptr of .dynamic: glibc relocates most in place, a few loaders do not. */
static uintptr_t col_dyn_ptr(const struct dl_phdr_info *info, uintptr_t p)
{
    return p >= info->dlpi_addr ? p : p + info->dlpi_addr;
}

int col_dyn_read(const struct dl_phdr_info *info, struct col_dyn *d)
{
    const ElfW(Dyn) *dyn = NULL;

    memset(d, 0, sizeof(*d));
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            /* What ld.so made read-only: whole pages only, a last partial
             * page stays writable (_dl_protect_relro), and must stay so. */
            uintptr_t page = (uintptr_t)getpagesize(); /* 4, 16 or 64 KiB on AArch64 */

            d->relro_lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
            d->relro_hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        }
    }
    if (!dyn)
        return -1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t p = col_dyn_ptr(info, dyn->d_un.d_ptr);

        switch (dyn->d_tag) {
        case DT_SYMTAB:
            d->symtab = (const ElfW(Sym) *)p;
            break;
        case DT_STRTAB:
            d->strtab = (const char *)p;
            break;
        case DT_HASH:
            d->hash = (const uint32_t *)p;
            break;
        case DT_GNU_HASH:
            d->gnu_hash = (const uint32_t *)p;
            break;
        case DT_VERSYM:
            d->versym = (const uint16_t *)p;
            break;
        case COL_DT_REL:
            d->rela = (const col_rel_t *)p;
            break;
        case COL_DT_RELSZ:
            d->rela_size = dyn->d_un.d_val;
            break;
        case DT_JMPREL:
            d->jmprel = (const col_rel_t *)p;
            break;
        case DT_PLTRELSZ:
            d->jmprel_size = dyn->d_un.d_val;
            break;
        case DT_PLTREL:
            if (dyn->d_un.d_val != COL_DT_REL)
                return -1; /* x86-64 uses RELA only, i386 REL */
            break;
        }
    }
    return d->symtab && d->strtab ? 0 : -1;
}

uint32_t col_dyn_nr_syms(const struct col_dyn *d)
{
    const uint32_t *gnu = d->gnu_hash;
    uint32_t nbuckets, symoffset, last = 0;
    const uint32_t *buckets, *chain;

    if (d->hash)
        return d->hash[1];
    if (!gnu)
        return 0;
    nbuckets = gnu[0];
    symoffset = gnu[1];
    buckets = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / 4);
    chain = buckets + nbuckets;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return last + 1;
}

int col_elf_is_self(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

        if (ph->p_type == PT_LOAD && (uintptr_t)col_elf_is_self >= lo &&
            (uintptr_t)col_elf_is_self < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* A defined, visible function called name at index i, or NULL. */
static const ElfW(Sym) * col_dyn_match(const struct col_dyn *d, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &d->symtab[i];
    int type = ELF32_ST_TYPE(s->st_info), bind = ELF32_ST_BIND(s->st_info);

    if (s->st_shndx == SHN_UNDEF || type != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK))
        return NULL;
    if (d->versym && (d->versym[i] & COL_VERSYM_HIDDEN))
        return NULL;
    return strcmp(d->strtab + s->st_name, name) == 0 ? s : NULL;
}

static const ElfW(Sym) * col_dyn_lookup_gnu(const struct col_dyn *d, const char *name)
{
    const uint32_t *gnu = d->gnu_hash;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], nr_bloom = gnu[2], shift = gnu[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnu + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + nr_bloom), *chain = buckets + nbuckets;
    uint32_t h = 5381, i;
    ElfW(Addr) word, mask;

    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    if (!nbuckets || !nr_bloom)
        return NULL;
    word = bloom[(h / COL_ELF_WORD_BITS) % nr_bloom];
    mask = ((ElfW(Addr))1 << (h % COL_ELF_WORD_BITS)) |
           ((ElfW(Addr))1 << ((h >> shift) % COL_ELF_WORD_BITS));
    if ((word & mask) != mask)
        return NULL;
    i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        const ElfW(Sym) * s;

        if ((h | 1) == (h2 | 1) && (s = col_dyn_match(d, i, name)))
            return s;
        if (h2 & 1)
            return NULL;
    }
}

static const ElfW(Sym) * col_dyn_lookup_sysv(const struct col_dyn *d, const char *name)
{
    uint32_t nbuckets = d->hash[0], h = 0;
    const uint32_t *buckets = d->hash + 2, *chain = buckets + nbuckets;

    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        uint32_t g;

        h = (h << 4) + *c;
        g = h & 0xf0000000u;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    if (!nbuckets)
        return NULL;
    for (uint32_t i = buckets[h % nbuckets]; i != STN_UNDEF; i = chain[i]) {
        const ElfW(Sym) *s = col_dyn_match(d, i, name);

        if (s)
            return s;
    }
    return NULL;
}

struct col_elf_find {
    const char *name;
    void *addr;
    const char *module;
};

static int col_elf_find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_elf_find *f = arg;
    const ElfW(Sym) *s = NULL;
    struct col_dyn d;

    (void)size;
    if (col_elf_is_self(info) || col_dyn_read(info, &d) != 0)
        return 0;
    if (d.gnu_hash)
        s = col_dyn_lookup_gnu(&d, f->name);
    else if (d.hash)
        s = col_dyn_lookup_sysv(&d, f->name);
    if (!s)
        return 0;
    f->addr = (void *)(info->dlpi_addr + s->st_value);
    f->module = info->dlpi_name ? info->dlpi_name : "";
    return 1;
}

void *col_elf_find(const char *name, const char **module)
{
    struct col_elf_find f = {name, NULL, NULL};

    col_dl_iterate_phdr(col_elf_find_one, &f);
    if (module)
        *module = f.module;
    return f.addr;
}

static int col_elf_read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1; /* the first object is enough */
}

unsigned long long col_elf_adds(void)
{
    unsigned long long adds = 0;

    col_dl_iterate_phdr(col_elf_read_adds, &adds);
    return adds;
}
