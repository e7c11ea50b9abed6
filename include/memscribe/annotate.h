/* SPDX-License-Identifier: MIT */
/* memscribe/annotate.h: tell memscribe about the blocks of your own
 * allocator (a pool, an arena, a free list), so that they show in its
 * reports as a heap of their own, next to malloc's (docs/record.md,
 * "Custom allocators"). Like valgrind's mempool client requests and
 * heaptrack_api.h. Include it, call the macros, link nothing:
 *
 *     MEMSCRIBE_POOL_CREATE(pool, "nodes");    once, before its blocks
 *     MEMSCRIBE_POOL_ALLOC(pool, p, size);     after p is handed out
 *     MEMSCRIBE_POOL_FREE(pool, p);            before p may be handed out again
 *     MEMSCRIBE_POOL_REALLOC(pool, old, p, size);
 *     MEMSCRIBE_POOL_DESTROY(pool);            ends the blocks still in it
 *
 * pool is any non-null pointer that names the pool (its address, usually;
 * calls with a null pool are ignored); a block
 * belongs to the pool it was allocated in, so an address may be live in a
 * pool and in malloc's heap (the arena the pool carves) at once.
 *
 * Cost when the program runs without memscribe: the functions below are
 * weak references, which stay null unless libmemscribe.so is loaded
 * (memscribe record, or LD_PRELOAD=.../libmemscribe.so), so each macro is
 * a load of one GOT entry, a test and a branch that is never taken. This
 * needs the reference to go through the GOT: a position-independent
 * executable (Debian's default) or shared library; in a -no-pie
 * executable the linker resolves the reference to 0 for good, and the
 * macros are no-ops even under memscribe. Define MEMSCRIBE_NO_ANNOTATE
 * to compile them out. C (C99 or later) and C++. */
#ifndef MEMSCRIBE_ANNOTATE_H
#define MEMSCRIBE_ANNOTATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by libmemscribe.so. Call them through the macros, which skip
 * them when they are absent. The name is copied (at most 255 bytes). */
void memscribe_pool_create(const void *pool, const char *name) __attribute__((weak));
void memscribe_pool_destroy(const void *pool) __attribute__((weak));
void memscribe_pool_alloc(const void *pool, const void *ptr, size_t size) __attribute__((weak));
void memscribe_pool_free(const void *pool, const void *ptr) __attribute__((weak));
void memscribe_pool_realloc(const void *pool, const void *old_ptr, const void *ptr, size_t size)
    __attribute__((weak));

#ifdef __cplusplus
}
#endif

#ifdef MEMSCRIBE_NO_ANNOTATE
#define MEMSCRIBE_ANNOTATE_CALL(fn, args) ((void)0)
#else
#define MEMSCRIBE_ANNOTATE_CALL(fn, args)                                                          \
    do {                                                                                           \
        if (__builtin_expect(fn != NULL, 0))                                                       \
            fn args;                                                                               \
    } while (0)
#endif

#define MEMSCRIBE_POOL_CREATE(pool, name)                                                          \
    MEMSCRIBE_ANNOTATE_CALL(memscribe_pool_create, ((pool), (name)))
#define MEMSCRIBE_POOL_DESTROY(pool) MEMSCRIBE_ANNOTATE_CALL(memscribe_pool_destroy, ((pool)))
#define MEMSCRIBE_POOL_ALLOC(pool, ptr, size)                                                      \
    MEMSCRIBE_ANNOTATE_CALL(memscribe_pool_alloc, ((pool), (ptr), (size)))
#define MEMSCRIBE_POOL_FREE(pool, ptr) MEMSCRIBE_ANNOTATE_CALL(memscribe_pool_free, ((pool), (ptr)))
#define MEMSCRIBE_POOL_REALLOC(pool, old_ptr, ptr, size)                                           \
    MEMSCRIBE_ANNOTATE_CALL(memscribe_pool_realloc, ((pool), (old_ptr), (ptr), (size)))

#endif
