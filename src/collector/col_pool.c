/* SPDX-License-Identifier: MIT */
/* The program's own pools (include/memscribe/annotate.h): the functions
 * its macros call when this collector is loaded, each recording one
 * POOL record with the caller's stack, thread and time, as a heap hook
 * does (docs/record-programs.md, "Custom allocators"). The collector keeps no
 * state per pool: the trace writer tells the pools' blocks apart. */
#include <stdint.h>
#include <string.h>

#include "collector/col_internal.h"
#include "memscribe/annotate.h"

#define COL_EXPORT __attribute__((visibility("default")))

/* One pool event. Inlined into each exported function, so the stack is
 * unwound from there (the collector's frames are dropped, the caller's
 * allocator is the leaf). A free is stamped before the program can hand
 * the address out again, an allocation after it got it: both are stamped
 * when the program calls, which the header asks to do in that order. */
static inline __attribute__((always_inline)) void col_pool_emit(uint8_t kind, const void *pool,
                                                                const void *addr, uint64_t size,
                                                                const void *old_addr,
                                                                const char *name)
{
    struct col_thread *t;
    uint32_t name_len = 0;

    /* Handle 0 is malloc's heap in the trace: no pool is NULL. */
    if (!pool || !(t = col_enter()))
        return;
    if (name)
        while (name_len < FMT_SHM_MAX_POOL_NAME && name[name_len])
            name_len++;
    if (COL_UNLIKELY(atomic_load_explicit(&col_modules_dirty, memory_order_relaxed) > 0))
        col_modules_poll(t);

    uint32_t stack = col_stack_here(t);
    uint32_t len = fmt_shm_pool_size(name_len);
    uint64_t ts = col_stamp(t);
    struct fmt_shm_pool *rec = col_ring_reserve(t, len);

    if (rec) {
        memset(rec, 0, len);
        rec->h.type = FMT_SHM_REC_POOL;
        rec->h.len = len;
        rec->ts_ns = ts;
        rec->kind = kind;
        rec->stack = stack;
        rec->pool = (uint64_t)(uintptr_t)pool;
        rec->addr = (uint64_t)(uintptr_t)addr;
        rec->size = size;
        rec->old_addr = (uint64_t)(uintptr_t)old_addr;
        rec->name_len = name_len;
        if (name_len)
            memcpy(rec->name, name, name_len);
        col_ring_commit(t, len);
    }
    col_stamp_done(t);
    col_leave(t);
}

COL_EXPORT void memscribe_pool_create(const void *pool, const char *name)
{
    col_pool_emit(FMT_EV_HEAP_CREATE, pool, pool, 0, NULL, name);
}

COL_EXPORT void memscribe_pool_destroy(const void *pool)
{
    col_pool_emit(FMT_EV_HEAP_DESTROY, pool, pool, 0, NULL, NULL);
}

COL_EXPORT void memscribe_pool_alloc(const void *pool, const void *ptr, size_t size)
{
    if (ptr)
        col_pool_emit(FMT_EV_MALLOC, pool, ptr, size, NULL, NULL);
}

COL_EXPORT void memscribe_pool_free(const void *pool, const void *ptr)
{
    if (ptr)
        col_pool_emit(FMT_EV_FREE, pool, ptr, 0, NULL, NULL);
}

COL_EXPORT void memscribe_pool_realloc(const void *pool, const void *old_ptr, const void *ptr,
                                       size_t size)
{
    if (!old_ptr)
        memscribe_pool_alloc(pool, ptr, size);
    else if (!ptr)
        memscribe_pool_free(pool, old_ptr);
    else
        col_pool_emit(FMT_EV_REALLOC, pool, ptr, size, old_ptr, NULL);
}
