/* SPDX-License-Identifier: MIT */
/* Calls every function the collector hooks, with known arguments, and
 * prints the events it expects between its two marker blocks. Also
 * allocates in a constructor of its own and in one of libcol_ctor.so
 * (sizes 1234 and 4321), before main. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "col_expect.h"

void col_ctor_touch(void); /* libcol_ctor.so */

static void *before_main;

__attribute__((constructor)) static void early(void)
{
    before_main = malloc(1234);
}

#define X(p) ((unsigned long)(uintptr_t)(p))

static const char *inplace(const void *a, const void *b)
{
    return a == b ? " in-place" : "";
}

int main(void)
{
    void *a, *b, *c, *c2, *c3, *c4, *d, *m1, *m2 = NULL, *m3, *v, *pv, *big, *fail, *bad = NULL;
    void *brk0, *brk1, *brk2;
    void *volatile nothing = NULL;
    char *m, *mm, *mf;
    int rc;

    col_ctor_touch();
    col_mark(COL_MARK_BEGIN);

    a = malloc(100);
    col_expect("malloc addr=0x%lx size=100", X(a));
    b = calloc(10, 24);
    col_expect("calloc addr=0x%lx size=240 nmemb=10 elem=24", X(b));
    c = realloc(nothing, 50); /* not NULL itself: gcc would make it malloc(50) */
    col_expect("realloc old=0x0 addr=0x%lx size=50", X(c));
    c2 = realloc(c, 5000);
    col_expect("realloc old=0x%lx addr=0x%lx size=5000%s", X(c), X(c2), inplace(c, c2));
    c3 = realloc(c2, 10);
    col_expect("realloc old=0x%lx addr=0x%lx size=10%s", X(c2), X(c3), inplace(c2, c3));
    c4 = realloc(c3, 0); /* glibc frees and returns NULL */
    col_expect("realloc old=0x%lx addr=0x%lx size=0", X(c3), X(c4));
    d = reallocarray(nothing, 4, 8);
    col_expect("reallocarray old=0x0 addr=0x%lx size=32 nmemb=4 elem=8", X(d));
    free(d);
    col_expect("free addr=0x%lx size=32", X(d));
    m1 = memalign(64, 100);
    col_expect("memalign addr=0x%lx size=100 align=64", X(m1));
    rc = posix_memalign(&m2, 128, 200);
    col_expect("posix_memalign addr=0x%lx size=200 align=128 rc=%d", X(m2), rc);
    m3 = aligned_alloc(256, 512);
    col_expect("aligned_alloc addr=0x%lx size=512 align=256", X(m3));
    v = valloc(300);
    col_expect("valloc addr=0x%lx size=300", X(v));
    pv = pvalloc(300);
    col_expect("pvalloc addr=0x%lx size=300", X(pv));
    free(a);
    col_expect("free addr=0x%lx size=100", X(a));
    free(b);
    col_expect("free addr=0x%lx size=240", X(b));
    free(m1);
    col_expect("free addr=0x%lx size=100", X(m1));
    free(m2);
    col_expect("free addr=0x%lx size=200", X(m2));
    free(m3);
    col_expect("free addr=0x%lx size=512", X(m3));
    free(v);
    col_expect("free addr=0x%lx size=300", X(v));
    free(pv);
    col_expect("free addr=0x%lx size=300", X(pv));
    free(nothing); /* free(NULL) itself gcc would drop */
    col_expect("free addr=0x0");

    big = malloc(64 << 20); /* glibc's own mmap serves it */
    col_expect("malloc addr=0x%lx size=%d libc-mmap", X(big), 64 << 20);
    free(big);
    col_expect("free addr=0x%lx size=%d", X(big), 64 << 20);
    fail = malloc(SIZE_MAX / 2);
    col_expect("malloc addr=0x%lx size=%zu failed", X(fail), SIZE_MAX / 2);
    rc = posix_memalign(&bad, 3, 10);
    col_expect("posix_memalign addr=0x0 size=10 align=3 rc=%d failed", rc);

    m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    col_expect("mmap addr=0x%lx size=8192 prot=0x3 flags=0x22 fd=-1 off=0x0", X(m));
    mm = mremap(m, 8192, 16384, MREMAP_MAYMOVE);
    col_expect("mremap old=0x%lx old_size=8192 addr=0x%lx size=16384 flags=0x1%s", X(m), X(mm),
               inplace(m, mm));
    mprotect(mm, 4096, PROT_READ);
    col_expect("mprotect addr=0x%lx size=4096 prot=0x1", X(mm));
    munmap(mm, 16384);
    col_expect("munmap addr=0x%lx size=16384", X(mm));
    mf = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 12345, 0);
    col_expect("mmap addr=0x0 size=4096 prot=0x1 flags=0x2 fd=12345 off=0x0 failed");
    (void)mf;

    brk0 = sbrk(0);
    col_expect("sbrk addr=0x%lx incr=0", X(brk0));
    brk1 = sbrk(4096);
    col_expect("sbrk addr=0x%lx incr=4096", X(brk1));
    brk2 = sbrk(-4096);
    col_expect("sbrk addr=0x%lx incr=-4096", X(brk2));
    rc = brk(brk0);
    col_expect("brk addr=0x%lx req=0x%lx", X(brk0), X(brk0));

    col_mark(COL_MARK_END);
    free(before_main);
    col_expect_flush(1);
    return rc;
}
