/* SPDX-License-Identifier: MIT */
/* Inline sites in a PDB (docs/windows.md, "Symbols"): built by clang -O2
 * with lld writing a PDB, one heap block allocated in a function forced
 * inline into another forced inline into inl_caller, and never freed. The
 * leak's stack must name inl_inner, inl_outer, inl_caller and main, each
 * at its INL- line (run_pdb.sh). tests/fuzz/corpus_pdb/inline.pdb is this
 * program's PDB (test_sym_pdb.c reads it). */
#include <stdio.h>
#include <windows.h>

static volatile int nr_allocs;

static inline __attribute__((always_inline)) void *inl_inner(SIZE_T n)
{
    void *p = HeapAlloc(GetProcessHeap(), 0, n); /* INL-inner */
    nr_allocs++;
    return p;
}

static inline __attribute__((always_inline)) void *inl_outer(SIZE_T n)
{
    void *p = inl_inner(n + 1); /* INL-outer */
    nr_allocs++;
    return p;
}

__attribute__((noinline)) void *inl_caller(SIZE_T n);
__attribute__((noinline)) void *inl_caller(SIZE_T n)
{
    void *p = inl_outer(n); /* INL-caller */
    nr_allocs++;
    return p;
}

int main(void)
{
    void *p = inl_caller(4999); /* INL-main */
    printf("win_prog_inline: %p %d\n", p, nr_allocs);
    return 0;
}
