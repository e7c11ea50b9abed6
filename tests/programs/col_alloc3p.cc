// SPDX-License-Identifier: MIT
// A program linked against another allocator (built with COL_JEMALLOC,
// COL_MIMALLOC or COL_TCMALLOC): each size is made by one kind of call
// only, so the trace's count per size is exact. Through the allocator's
// malloc: malloc(5001) x3, calloc(1, 5002) x2, realloc(10 bytes, 5003) x1.
// C++, through its operator new: new char[5005] x2, new of 5004 bytes x4,
// and of an alignas(64) type of 5056 bytes x1. Its own API: 5101 x3,
// zeroed 5102 x2, realloc to 5103 x1, 64-aligned 5104 x1. Every block is
// freed by the matching call. mimalloc also: from a heap of its own,
// malloc 5105, calloc 5106 reallocated to 5107. Then a new that throws bad_alloc (not with
// mimalloc) and malloc(5201) x1.
#include <cstdio>
#include <cstdlib>
#include <new>
#if defined(COL_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(COL_MIMALLOC)
#include <mimalloc.h>
#elif defined(COL_TCMALLOC)
#include <gperftools/tcmalloc.h>
#endif

struct Plain {
    char bytes[5004];
};

struct alignas(64) Wide {
    char bytes[5056];
};

static void *use(void *p)
{
    if (!p)
        std::exit(3);
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

static void own_api()
{
#if defined(COL_JEMALLOC)
    for (int i = 0; i < 3; i++)
        dallocx(use(mallocx(5101, 0)), 0);
    for (int i = 0; i < 2; i++)
        sdallocx(use(mallocx(5102, MALLOCX_ZERO)), 5102, 0);
    dallocx(use(rallocx(use(mallocx(20, 0)), 5103, 0)), 0);
    dallocx(use(mallocx(5104, MALLOCX_ALIGN(64))), 0);
#elif defined(COL_MIMALLOC)
    for (int i = 0; i < 3; i++)
        mi_free(use(mi_malloc(5101)));
    mi_free(use(mi_zalloc(5102)));
    mi_free(use(mi_calloc(1, 5102)));
    mi_free(use(mi_realloc(use(mi_malloc(20)), 5103)));
    mi_free(use(mi_malloc_aligned(5104, 64)));
    {
        mi_heap_t *heap = mi_heap_new();

        mi_free(use(mi_heap_malloc(heap, 5105)));
        mi_free(use(mi_heap_realloc(heap, use(mi_heap_calloc(heap, 1, 5106)), 5107)));
        mi_heap_delete(heap);
    }
#elif defined(COL_TCMALLOC)
    for (int i = 0; i < 3; i++)
        tc_free(use(tc_malloc(5101)));
    for (int i = 0; i < 2; i++)
        tc_free(use(tc_calloc(1, 5102)));
    tc_free(use(tc_realloc(use(tc_malloc(20)), 5103)));
    tc_free(use(tc_memalign(64, 5104)));
#endif
}

int main()
{
    for (int i = 0; i < 3; i++)
        std::free(use(std::malloc(5001)));
    for (int i = 0; i < 2; i++)
        std::free(use(std::calloc(1, 5002)));
    std::free(use(std::realloc(use(std::malloc(10)), 5003)));
    for (int i = 0; i < 2; i++)
        delete[] static_cast<char *>(use(new char[5005]));
    for (int i = 0; i < 4; i++)
        delete static_cast<Plain *>(use(new Plain));
    delete static_cast<Wide *>(use(new Wide));
    own_api();
#if !defined(COL_MIMALLOC) // mimalloc's C new cannot throw: it aborts
    try {
        volatile size_t huge = static_cast<size_t>(1) << 62; // not a constant: clang refuses one
        use(new char[huge]);
        return 4;
    } catch (const std::bad_alloc &) {
        // the exception left the collector's hook: the thread is still traced
    }
#endif
    std::free(use(std::malloc(5201)));
    std::puts("done");
    return 0;
}
