/* SPDX-License-Identifier: MIT */
/* Loaded objects' dynamic sections and symbol tables, read in place
 * (col_elf.c): the attach build's GOT patching and the late lookup of
 * operator new and the other allocators' entry points share them. */
#ifndef COL_ELF_INTERNAL_H
#define COL_ELF_INTERNAL_H

#include <link.h>
#include <stdint.h>

/* x86-64 and AArch64 relocate with RELA, i386 with REL; JUMP_SLOT and
 * GLOB_DAT entries hold the symbol's address either way. */
#if defined(__x86_64__) || defined(__aarch64__)
typedef ElfW(Rela) col_rel_t;
#define COL_DT_REL DT_RELA
#define COL_DT_RELSZ DT_RELASZ
#else
typedef ElfW(Rel) col_rel_t;
#define COL_DT_REL DT_REL
#define COL_DT_RELSZ DT_RELSZ
#endif

/* What one object's PT_DYNAMIC points at (NULL and 0 where absent). */
struct col_dyn {
    const ElfW(Sym) * symtab;
    const char *strtab;
    const uint32_t *hash, *gnu_hash;
    const uint16_t *versym;
    const col_rel_t *rela, *jmprel;
    size_t rela_size, jmprel_size;
    uintptr_t relro_lo, relro_hi; /* page-aligned, as ld.so protects it */
};

/* Read an object's dynamic section. Returns 0, or -1 if it has none, no
 * symbol table, or PLT relocations of the other kind. Never allocates. */
int col_dyn_read(const struct dl_phdr_info *info, struct col_dyn *d);

/* How many symbols .dynsym holds (DT_HASH says; DT_GNU_HASH is walked to
 * the end of its longest chain). */
uint32_t col_dyn_nr_syms(const struct col_dyn *d);

/* 1 if info is the collector's own object (the one this code is in). */
int col_elf_is_self(const struct dl_phdr_info *info);

/* The first definition of the function name, in load order (the order
 * the loader searches its global scope in), in any loaded object but the
 * collector: also in objects a dlopen brought in with RTLD_LOCAL, which
 * dlsym(RTLD_NEXT) does not search. A symbol of a non-default version
 * (name@VER) does not count. Returns its address and, if module is not
 * NULL, the object's name there; NULL if nothing defines it. Never
 * allocates; takes the loader's list lock (dl_iterate_phdr). */
void *col_elf_find(const char *name, const char **module);

/* The loader's count of objects ever loaded: a change says the answers
 * of col_elf_find may have changed. One dl_iterate_phdr step. */
unsigned long long col_elf_adds(void);

#endif
