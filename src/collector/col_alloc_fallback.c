/* SPDX-License-Identifier: MIT */
/* The allocator entry points' own definitions, for where no loaded object
 * defines the name (col_alloc_fallback_internal.h says when that
 * happens). Never reached in a program whose own objects define them. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/col_alloc_fallback_internal.h"
#include "collector/col_elf_internal.h"
#include "collector/col_internal.h"

/* glibc's malloc alignment (MALLOC_ALIGNMENT): malloc and realloc give at
 * least this, on x86-64 and on i386 alike. */
#define COL_FB_MALLOC_ALIGN 16
/* jemalloc's flags (MALLOCX_LG_ALIGN, MALLOCX_ZERO). */
#define COL_FB_JE_ALIGN(flags) ((flags)&0x3f ? (size_t)1 << ((flags)&0x3f) : 0)
#define COL_FB_JE_ZERO 0x40

/* The real functions are looked up at init; a call can come first (a
 * constructor of a library loaded before us). */
static void col_fb_ready(void)
{
    if (COL_UNLIKELY(!col_real.malloc)) {
        int busy = col_thread.busy;

        col_thread.busy = 1;
        col_init();
        col_thread.busy = busy;
    }
}

/* align for memalign: a power of two, at least a pointer's size. */
static void *col_fb_memalign(size_t align, size_t size)
{
    col_fb_ready();
    if (align <= COL_FB_MALLOC_ALIGN)
        return col_real.malloc(size);
    return col_real.memalign(align, size);
}

/* realloc to an alignment malloc does not promise: a new block, the old
 * contents (as far as both reach), the old block freed. */
static void *col_fb_realloc_aligned(void *p, size_t size, size_t align)
{
    size_t old;
    void *q;

    col_fb_ready();
    if (align <= COL_FB_MALLOC_ALIGN || !p)
        return p ? col_real.realloc(p, size) : col_fb_memalign(align, size);
    if (!((uintptr_t)p & (align - 1)) && col_real.malloc_usable_size(p) >= size)
        return p;
    q = col_real.memalign(align, size);
    if (!q)
        return NULL;
    old = col_real.malloc_usable_size(p);
    memcpy(q, p, old < size ? old : size);
    col_real.free(p);
    return q;
}

/* The C++ runtime's parts, looked up when needed: the program may load
 * one after its first new. */
typedef void (*col_fb_handler_fn)(void);

static col_fb_handler_fn col_fb_handler(void)
{
    col_fb_handler_fn (*get)(void);

    *(void **)&get = col_elf_find("_ZSt15get_new_handlerv", NULL); /* std::get_new_handler() */
    return get ? get() : NULL;
}

/* throw std::bad_alloc(), as the runtime's own operator new would: an
 * exception object that is one vtable pointer (Itanium C++ ABI). */
static __attribute__((noreturn)) void col_fb_throw_bad_alloc(void)
{
    void *(*allocate)(size_t);
    void (*throw_it)(void *, void *, void (*)(void *));
    void (*dtor)(void *);
    void *type = col_elf_find("_ZTISt9bad_alloc", NULL);
    char *vtable = col_elf_find("_ZTVSt9bad_alloc", NULL);

    *(void **)&allocate = col_elf_find("__cxa_allocate_exception", NULL);
    *(void **)&throw_it = col_elf_find("__cxa_throw", NULL);
    *(void **)&dtor = col_elf_find("_ZNSt9bad_allocD1Ev", NULL);
    if (allocate && throw_it && dtor && type && vtable) {
        void **e = allocate(sizeof(void *));

        *e = vtable + 2 * sizeof(void *); /* past offset-to-top and typeinfo */
        throw_it(e, type, dtor);
    }
    col_say("operator new: out of memory, and no C++ runtime is loaded to throw std::bad_alloc",
            ENOMEM);
    abort();
}

/* One try of operator new's loop: the block, or NULL after the handler
 * ran (try again); *none set when there is no handler. */
static void *col_fb_new_try(size_t size, size_t align, int *none)
{
    void *p = col_fb_memalign(align, size ? size : 1);
    col_fb_handler_fn h;

    if (p)
        return p;
    h = col_fb_handler();
    if (!h) {
        *none = 1;
        return NULL;
    }
    h();
    return NULL;
}

void *col_fb_new_zz(size_t size, size_t align)
{
    for (;;) {
        int none = 0;
        void *p = col_fb_new_try(size, align, &none);

        if (p)
            return p;
        if (none)
            col_fb_throw_bad_alloc();
    }
}

void *col_fb_new_zzn(size_t size, size_t align, const void *nothrow)
{
    (void)nothrow;
    for (;;) {
        int none = 0;
        void *p = col_fb_new_try(size, align, &none);

        if (p || none)
            return p;
    }
}

void *col_fb_new_z(size_t size)
{
    return col_fb_new_zz(size, 0);
}

void *col_fb_new_zn(size_t size, const void *nothrow)
{
    return col_fb_new_zzn(size, 0, nothrow);
}

void col_fb_free_p(void *p)
{
    col_fb_ready();
    col_real.free(p);
}

void col_fb_free_pz(void *p, size_t ignored)
{
    (void)ignored;
    col_fb_free_p(p);
}

void col_fb_free_pn(void *p, const void *nothrow)
{
    (void)nothrow;
    col_fb_free_p(p);
}

void col_fb_free_pzz(void *p, size_t ignored1, size_t ignored2)
{
    (void)ignored1;
    (void)ignored2;
    col_fb_free_p(p);
}

void col_fb_free_pzn(void *p, size_t ignored, const void *nothrow)
{
    (void)ignored;
    (void)nothrow;
    col_fb_free_p(p);
}

void col_fb_free_pi(void *p, int flags)
{
    (void)flags;
    col_fb_free_p(p);
}

void col_fb_free_pzi(void *p, size_t size, int flags)
{
    (void)size;
    (void)flags;
    col_fb_free_p(p);
}

void *col_fb_malloc_z(size_t size)
{
    col_fb_ready();
    return col_real.malloc(size);
}

void *col_fb_calloc_zz(size_t count, size_t size)
{
    col_fb_ready();
    return col_real.calloc(count, size);
}

void *col_fb_zalloc_z(size_t size)
{
    return col_fb_calloc_zz(1, size);
}

void *col_fb_realloc_pz(void *p, size_t size)
{
    col_fb_ready();
    return col_real.realloc(p, size);
}

void *col_fb_memalign_zz(size_t align, size_t size)
{
    return col_fb_memalign(align, size);
}

int col_fb_posix_memalign_pzz(void **out, size_t align, size_t size)
{
    col_fb_ready();
    return col_real.posix_memalign(out, align, size);
}

void *col_fb_aligned_zz(size_t size, size_t align)
{
    return col_fb_memalign(align, size);
}

void *col_fb_zaligned_zz(size_t size, size_t align)
{
    void *p = col_fb_memalign(align, size);

    if (p)
        memset(p, 0, size);
    return p;
}

void *col_fb_realloc_aligned_pzz(void *p, size_t size, size_t align)
{
    return col_fb_realloc_aligned(p, size, align);
}

void *col_fb_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *p = col_fb_malloc_z(len);

    if (p)
        memcpy(p, s, len);
    return p;
}

void *col_fb_heap_malloc(void *heap, size_t size)
{
    (void)heap;
    return col_fb_malloc_z(size);
}

void *col_fb_heap_zalloc(void *heap, size_t size)
{
    (void)heap;
    return col_fb_zalloc_z(size);
}

void *col_fb_heap_calloc(void *heap, size_t count, size_t size)
{
    (void)heap;
    return col_fb_calloc_zz(count, size);
}

void *col_fb_heap_realloc(void *heap, void *p, size_t size)
{
    (void)heap;
    return col_fb_realloc_pz(p, size);
}

void *col_fb_heap_aligned(void *heap, size_t size, size_t align)
{
    (void)heap;
    return col_fb_memalign(align, size);
}

void *col_fb_mallocx(size_t size, int flags)
{
    void *p = col_fb_memalign(COL_FB_JE_ALIGN(flags), size);

    if (p && (flags & COL_FB_JE_ZERO))
        memset(p, 0, size);
    return p;
}

void *col_fb_rallocx(void *p, size_t size, int flags)
{
    size_t old;
    void *q;

    col_fb_ready();
    old = (flags & COL_FB_JE_ZERO) ? col_real.malloc_usable_size(p) : 0;
    q = col_fb_realloc_aligned(p, size, COL_FB_JE_ALIGN(flags));
    if (q && (flags & COL_FB_JE_ZERO) && old < size)
        memset((char *)q + old, 0, size - old);
    return q;
}
