/* SPDX-License-Identifier: MIT */
/* A C program with no C++ runtime and no other allocator that still reaches
 * operator new, jemalloc's, mimalloc's and tcmalloc's entry points by name
 * (dlsym(RTLD_DEFAULT), as a program probing for an allocator does): where
 * nothing else defines them, the collector's definitions answer and must
 * keep each contract (alignment, zeroing, contents kept by a realloc,
 * nothrow's NULL). Untraced, nothing defines them: it says so and exits 0.
 * Traced, it prints the calls it expects between its marker blocks
 * (col_expect.h). Exits 1 on a broken contract. */
#include <dlfcn.h>
#include <stdint.h>

#include "col_expect.h"

#define X(p) ((unsigned long)(uintptr_t)(p))

static int bad;

static void *look(const char *name)
{
    void *fn = dlsym(RTLD_DEFAULT, name);

    if (!fn) {
        fprintf(stderr, "col_cxx_none: %s is not defined\n", name);
        bad = 1;
    }
    return fn;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "col_cxx_none: %s\n", what);
        bad = 1;
    }
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

int main(void)
{
    void *(*nw)(size_t), *(*nw_nt)(size_t, const void *), *(*nw_al)(size_t, size_t);
    void (*del)(void *), (*del_sz_al)(void *, size_t, size_t);
    void *(*mallocx)(size_t, int), *(*rallocx)(void *, size_t, int);
    void (*dallocx)(void *, int);
    void *(*mi_zalloc)(size_t), *(*mi_malloc_aligned)(size_t, size_t);
    void (*mi_free)(void *);
    void *(*tc_memalign)(size_t, size_t);
    void (*tc_free)(void *);
    unsigned char *a, *b, *c, *d, *e, *f, *g;

    if (!dlsym(RTLD_DEFAULT, "_Znwm")) {
        puts("untraced: nothing defines operator new here");
        return 0;
    }
    *(void **)&nw = look("_Znwm");
    *(void **)&nw_nt = look("_ZnamRKSt9nothrow_t");
    *(void **)&nw_al = look("_ZnwmSt11align_val_t");
    *(void **)&del = look("_ZdlPv");
    *(void **)&del_sz_al = look("_ZdaPvmSt11align_val_t");
    *(void **)&mallocx = look("mallocx");
    *(void **)&rallocx = look("rallocx");
    *(void **)&dallocx = look("dallocx");
    *(void **)&mi_zalloc = look("mi_zalloc");
    *(void **)&mi_malloc_aligned = look("mi_malloc_aligned");
    *(void **)&mi_free = look("mi_free");
    *(void **)&tc_memalign = look("tc_memalign");
    *(void **)&tc_free = look("tc_free");
    if (bad)
        return 1;

    col_mark(COL_MARK_BEGIN);
    a = nw(4001);
    col_expect("malloc addr=0x%lx size=4001", X(a));
    check(a != NULL, "operator new(4001) gave NULL");
    b = nw_nt((size_t)1 << 62, NULL);
    col_expect("malloc addr=0x0 size=%zu failed", (size_t)1 << 62);
    check(b == NULL, "operator new[](2^62, nothrow) did not give NULL");
    c = nw_al(4003, 256);
    col_expect("aligned_alloc addr=0x%lx size=4003 align=256", X(c));
    check(c && X(c) % 256 == 0, "operator new(4003, align 256) is not aligned");
    d = mallocx(4004, 6 | 0x40); /* MALLOCX_LG_ALIGN(6) | MALLOCX_ZERO */
    col_expect("aligned_alloc addr=0x%lx size=4004 align=64", X(d));
    check(d && X(d) % 64 == 0 && all_zero(d, 4004), "mallocx(align 64, zero) broke its contract");
    d[0] = 42;
    e = rallocx(d, 9005, 0x40);
    col_expect("realloc old=0x%lx addr=0x%lx size=9005", X(d), X(e));
    check(e && e[0] == 42 && all_zero(e + 4004, 9005 - 4004), "rallocx(zero) broke its contract");
    f = mi_zalloc(4006);
    col_expect("calloc addr=0x%lx size=4006 nmemb=1 elem=4006", X(f));
    check(f && all_zero(f, 4006), "mi_zalloc gave no zeroed block");
    g = mi_malloc_aligned(4007, 512);
    col_expect("aligned_alloc addr=0x%lx size=4007 align=512", X(g));
    check(g && X(g) % 512 == 0, "mi_malloc_aligned(512) is not aligned");
    del(a);
    col_expect("free addr=0x%lx size=4001", X(a));
    del_sz_al(c, 4003, 256);
    col_expect("free addr=0x%lx size=4003", X(c));
    dallocx(e, 0);
    col_expect("free addr=0x%lx size=9005", X(e));
    mi_free(f);
    col_expect("free addr=0x%lx size=4006", X(f));
    mi_free(g);
    col_expect("free addr=0x%lx size=4007", X(g));
    a = tc_memalign(1024, 4008);
    col_expect("memalign addr=0x%lx size=4008 align=1024", X(a));
    check(a && X(a) % 1024 == 0, "tc_memalign(1024) is not aligned");
    tc_free(a);
    col_expect("free addr=0x%lx size=4008", X(a));
    col_mark(COL_MARK_END);
    col_expect_flush(1);
    return bad;
}
