/* SPDX-License-Identifier: MIT */
/* librpl_huge.so, which rpl_known_huge links (so it comes after the
 * preloaded collector, whose malloc calls this one) for a trace of
 * tests/e2e/replay_known.sh: a malloc of 2^40 bytes or more succeeds
 * with a made-up address that nobody touches (no machine here has 1,000
 * TiB), so the trace holds calls that fail when replayed. Everything else
 * is glibc's. */
#include <stddef.h>
#include <stdint.h>

#define HUGE_FROM ((size_t)1 << 40)
/* Made-up blocks at 2^52 + i * 2^40: far from any real mapping. */
#define FAKE_BASE ((uintptr_t)1 << 52)

void *__libc_malloc(size_t size);
void __libc_free(void *p);
void *malloc(size_t size);
void free(void *p);

static uintptr_t next_fake = FAKE_BASE;

void *malloc(size_t size)
{
    if (size >= HUGE_FROM) {
        void *p = (void *)__atomic_fetch_add(&next_fake, HUGE_FROM, __ATOMIC_RELAXED);

        return p;
    }
    return __libc_malloc(size);
}

void free(void *p)
{
    if ((uintptr_t)p >= FAKE_BASE)
        return;
    __libc_free(p);
}
