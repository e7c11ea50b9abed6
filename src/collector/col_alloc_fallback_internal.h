/* SPDX-License-Identifier: MIT */
/* What the allocator entry points the collector exports (col_hooks_alloc.c)
 * do where no loaded object defines them (col_alloc_fallback.c): the
 * program reached our definition all the same (a weak reference, a
 * dlsym(RTLD_DEFAULT), a library linked without its C++ runtime), so the
 * call must still do what its contract says. Each is built on glibc's
 * malloc family (col_real: unrecorded; the hook records the call as the
 * kind it is), so its blocks may be freed with free() and realloc'd.
 *
 * Each is named for its parameters: p a pointer, z a size, i an int, n a
 * nothrow tag. Built with -fexceptions: a new-handler or bad_alloc may
 * unwind through them. */
#ifndef COL_ALLOC_FALLBACK_INTERNAL_H
#define COL_ALLOC_FALLBACK_INTERNAL_H

#include <stddef.h>

/* operator new: malloc, and on failure the program's new-handler while
 * it has one, then std::bad_alloc (or abort() with a message where no C++
 * runtime is loaded to throw it). Size 0 is 1. */
void *col_fb_new_z(size_t size);
void *col_fb_new_zz(size_t size, size_t align);
/* The nothrow forms: NULL where the throwing form would throw. A
 * new-handler that throws propagates (C cannot catch it). */
void *col_fb_new_zn(size_t size, const void *nothrow);
void *col_fb_new_zzn(size_t size, size_t align, const void *nothrow);

/* free() whatever the other arguments are (sizes, alignments, flags). */
void col_fb_free_p(void *p);
void col_fb_free_pz(void *p, size_t ignored);
void col_fb_free_pn(void *p, const void *nothrow);
void col_fb_free_pzz(void *p, size_t ignored1, size_t ignored2);
void col_fb_free_pzn(void *p, size_t ignored, const void *nothrow);
void col_fb_free_pi(void *p, int flags);
void col_fb_free_pzi(void *p, size_t size, int flags);

/* The malloc family by other names (mimalloc's, tcmalloc's). */
void *col_fb_malloc_z(size_t size);
void *col_fb_zalloc_z(size_t size);
void *col_fb_calloc_zz(size_t count, size_t size);
void *col_fb_realloc_pz(void *p, size_t size);
void *col_fb_memalign_zz(size_t align, size_t size);
int col_fb_posix_memalign_pzz(void **out, size_t align, size_t size);
/* (size, align), as mimalloc orders them */
void *col_fb_aligned_zz(size_t size, size_t align);
void *col_fb_zaligned_zz(size_t size, size_t align);
void *col_fb_realloc_aligned_pzz(void *p, size_t size, size_t align);
void *col_fb_strdup(const char *s);
/* mimalloc's heaps: the heap is ignored, there is only malloc's. */
void *col_fb_heap_malloc(void *heap, size_t size);
void *col_fb_heap_zalloc(void *heap, size_t size);
void *col_fb_heap_calloc(void *heap, size_t count, size_t size);
void *col_fb_heap_realloc(void *heap, void *p, size_t size);
void *col_fb_heap_aligned(void *heap, size_t size, size_t align);
/* jemalloc's: flags' low 6 bits are lg(alignment), bit 6 zeroes. */
void *col_fb_mallocx(size_t size, int flags);
void *col_fb_rallocx(void *p, size_t size, int flags);

#endif
