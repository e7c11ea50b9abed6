// SPDX-License-Identifier: MIT
// C++ new and delete of win_prog_known: through the C runtime's malloc to
// ntdll's RtlAllocateHeap, on whatever heap the runtime uses.
#include <cstdint>
#include <cstdio>

extern "C" void expect(void *fn, const char *fmt, ...);
extern "C" void cxx_new_delete(void);

struct Node {
    long long v[5]; // 40 bytes (long is 4 bytes on Windows)
};

extern "C" void cxx_new_delete(void)
{
    Node *n = new Node();
    char *buf = new char[1000];
    unsigned long long pn = (uintptr_t)n, pb = (uintptr_t)buf;

    delete n;
    delete[] buf;
    expect((void *)cxx_new_delete, "HEAP_ALLOC size=0x28 result=0x%llx", pn);
    expect((void *)cxx_new_delete, "HEAP_ALLOC size=0x3e8 result=0x%llx", pb);
    expect((void *)cxx_new_delete, "HEAP_FREE ptr=0x%llx result=0x1", pn);
    expect((void *)cxx_new_delete, "HEAP_FREE ptr=0x%llx result=0x1", pb);
}
