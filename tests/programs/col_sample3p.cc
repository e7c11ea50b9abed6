// SPDX-License-Identifier: MIT
// record --sample with another allocator (tests/e2e/record_sample_alloc.sh;
// built with COL_JEMALLOC, COL_MIMALLOC or COL_TCMALLOC as col_alloc3p.cc
// is): 100,000 blocks of 16 to 4,111 bytes from a fixed sequence, made in
// turn by the allocator's own API (mallocx, mi_malloc, tc_malloc) and by
// its operator new, neither of which goes through malloc; every tenth
// kept, the others freed by the matching call; then the first hundred
// kept blocks of its own API resized by its realloc. Prints the bytes
// allocated.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#if defined(COL_JEMALLOC)
#include <jemalloc/jemalloc.h>
#define OWN_MALLOC(s) mallocx((s), 0)
#define OWN_REALLOC(p, s) rallocx((p), (s), 0)
#define OWN_FREE(p) dallocx((p), 0)
#elif defined(COL_MIMALLOC)
#include <mimalloc.h>
#define OWN_MALLOC(s) mi_malloc(s)
#define OWN_REALLOC(p, s) mi_realloc((p), (s))
#define OWN_FREE(p) mi_free(p)
#elif defined(COL_TCMALLOC)
#include <gperftools/tcmalloc.h>
#define OWN_MALLOC(s) tc_malloc(s)
#define OWN_REALLOC(p, s) tc_realloc((p), (s))
#define OWN_FREE(p) tc_free(p)
#endif

enum { NR_BLOCKS = 100000 };

static void *keep[NR_BLOCKS / 10];
static bool keep_own[NR_BLOCKS / 10];

static std::size_t next_size(std::uint64_t &x)
{
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return 16 + static_cast<std::size_t>(x >> 33) % 4096;
}

int main()
{
    std::uint64_t x = 12345, allocated = 0;
    unsigned nr_keep = 0;

    for (unsigned i = 0; i < NR_BLOCKS; i++) {
        std::size_t size = next_size(x);
        bool own = i % 2 == 0;
        void *p = own ? OWN_MALLOC(size) : ::operator new(size);

        if (!p)
            return 1;
        __asm__ volatile("" ::"r"(p) : "memory");
        allocated += size;
        if (i % 10 == 0) {
            keep_own[nr_keep] = own;
            keep[nr_keep++] = p;
        } else if (own) {
            OWN_FREE(p);
        } else {
            ::operator delete(p);
        }
    }
    for (unsigned i = 0, done = 0; i < nr_keep && done < 100; i++) {
        std::size_t size;

        if (!keep_own[i])
            continue;
        size = next_size(x);
        keep[i] = OWN_REALLOC(keep[i], size);
        if (!keep[i])
            return 1;
        allocated += size;
        done++;
    }
    for (unsigned i = 0; i < nr_keep; i++) {
        if (keep_own[i])
            OWN_FREE(keep[i]);
        else
            ::operator delete(keep[i]);
    }
    std::printf("allocated %llu\n", static_cast<unsigned long long>(allocated));
    return 0;
}
