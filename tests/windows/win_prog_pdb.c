/* SPDX-License-Identifier: MIT */
/* Allocation sites at known lines, built with clang and lld writing a PDB
 * (tests/windows/run_pdb.sh): the leaks report must name each function,
 * file and line exactly, read from the PDB alone (the PE has no DWARF and
 * no COFF symbol table). Each site is marked SITE-<name> on its line; the
 * test reads the expected line numbers from this file. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

/* A global function (S_GPROC32) leaking one HeapAlloc block. */
__declspec(noinline) void *pdb_heap_leak(HANDLE heap)
{
    return HeapAlloc(heap, 0, 4242); /* SITE-heap */
}

/* A static function (S_LPROC32) leaking through the CRT's malloc. */
static __declspec(noinline) void *pdb_malloc_leak(size_t n)
{
    void *p = malloc(n); /* SITE-malloc */
    return p;
}

/* Called in a loop: one call site, several leaked blocks. */
__declspec(noinline) void *pdb_loop_leak(int i)
{
    return HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, 100 + (size_t)i); /* SITE-loop */
}

int main(void)
{
    HANDLE heap = HeapCreate(0, 0, 0);
    void *keep[4];

    keep[0] = pdb_heap_leak(heap);
    keep[1] = pdb_malloc_leak(1717);
    for (int i = 0; i < 2; i++)
        keep[2 + i] = pdb_loop_leak(i);
    printf("win_prog_pdb: %p %p %p %p\n", keep[0], keep[1], keep[2], keep[3]);
    return 0;
}

#ifdef PDB_OTHER_BUILD
/* Another build of the program: another GUID in its CodeView record. */
int pdb_other_build(void)
{
    return 1;
}
#endif
