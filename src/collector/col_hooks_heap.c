/* SPDX-License-Identifier: MIT */
/* The malloc family hooks. An allocation is stamped after the real call
 * returns, a free before it, so that when another thread gets the same
 * address back, the free sorts first (docs/protocol.md). */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "collector/col_internal.h"

#define COL_EXPORT __attribute__((visibility("default")))

_Atomic int col_modules_dirty;

/* Bootstrap arena: memory for the calls dlsym makes before the real
 * functions are known. Never freed; each block remembers its size for a
 * later realloc. */
#define COL_BOOT_SIZE (256 * 1024)
static _Alignas(64) unsigned char col_boot[COL_BOOT_SIZE];
static _Atomic size_t col_boot_top;

static int col_is_boot(const void *p)
{
    return (uintptr_t)p - (uintptr_t)col_boot < COL_BOOT_SIZE;
}

static void *col_boot_alloc(size_t size, size_t align)
{
    size_t top, start;

    if (align < 16)
        align = 16;
    if (size > COL_BOOT_SIZE || align > 4096)
        return NULL;
    top = atomic_load(&col_boot_top);
    do {
        start = (top + 16 + align - 1) & ~(align - 1);
        if (start + size > COL_BOOT_SIZE)
            return NULL;
    } while (!atomic_compare_exchange_weak(&col_boot_top, &top, start + size));
    memcpy(col_boot + start - 8, &size, sizeof(size));
    return col_boot + start; /* static storage: already zero */
}

static size_t col_boot_size(const void *p)
{
    size_t size;

    memcpy(&size, (const unsigned char *)p - 8, sizeof(size));
    return size;
}

/* Watch the module set: closely for a while after a dlopen (its
 * constructors may allocate before it returns), and now and then always. */
static void col_check_modules(struct col_thread *t)
{
    if (COL_UNLIKELY(atomic_load_explicit(&col_modules_dirty, memory_order_relaxed) > 0 ||
                     (++t->nr_events & COL_MODULE_POLL_MASK) == 0))
        col_modules_poll(t);
}

/* glibc marks a chunk it got from its own mmap: bit 1 of the size word in
 * front of the block (IS_MMAPPED, malloc/malloc.c). Only read when the
 * real malloc is glibc's (another allocator may have no such word). Never
 * inlined: valgrind's suppression of that read names this function
 * (tests/e2e/record_valgrind.supp), and whether gcc inlines it moves with
 * the code around the hooks. */
static __attribute__((noinline)) uint8_t col_libc_mmap_flag(const void *p)
{
    return col_glibc_malloc && p && (((const size_t *)p)[-1] & 2) ? FMT_EVF_LIBC_MMAP : 0;
}

/* Record an allocation that has returned p. Inlined, so that the stack is
 * unwound from the hook's own frame (col_stack_here). */
static inline __attribute__((always_inline)) void
col_alloc_done_with(struct col_thread *t, uint8_t kind, void *p, uint64_t size,
                    const uint64_t *extra, unsigned nargs, int failed, int plain)
{
    uint32_t stack;
    uint64_t ts;

    if (COL_UNLIKELY(col_sample_bytes))
        col_count_alloc(t, kind, failed ? NULL : p, size);
    if (COL_UNLIKELY(col_sample_bytes) && col_sample_skip(t, p, size)) {
        /* not sampled: no unwind, no event */
        if (plain)
            col_leave_plain(t);
        else
            col_leave(t);
        return;
    }
    col_check_modules(t);
    stack = col_stack_here(t);
    ts = col_stamp_with(t, plain);
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, kind,
                          (uint8_t)(failed ? FMT_EVF_FAILED : col_libc_mmap_flag(p)), 0, stack, ts,
                          (uint64_t)(uintptr_t)p, size, extra, nargs);
    col_stamp_done(t);
    if (plain)
        col_leave_plain(t);
    else
        col_leave(t);
}

static inline __attribute__((always_inline)) void col_alloc_done(struct col_thread *t, uint8_t kind,
                                                                 void *p, uint64_t size,
                                                                 const uint64_t *extra,
                                                                 unsigned nargs, int failed)
{
    col_alloc_done_with(t, kind, p, size, extra, nargs, failed, 0);
}

/* The hooks of the calls a program makes most come in two parts: the
 * exported function takes the fast paths (a dormant image, one record
 * --only did not pick (col_only.c), and an unsampled call go straight to
 * the real function) and otherwise jumps (a tail call:
 * no frame of its own, so stacks are unwound as before) to the whole
 * hook, whose frame (callee-saved registers, the unwind buffer) a fast
 * path would pay for on every call. */
static __attribute__((noinline)) void *col_malloc(size_t size)
{
    struct col_thread *t;
    void *p;

    /* The plain path: no dispatch to arm around the real call. */
    if (COL_LIKELY(col_hook_plain) && (t = col_enter_plain()) != NULL) {
        p = col_real.malloc(size);
        col_alloc_done_with(t, FMT_EV_MALLOC, p, size, NULL, 0, p == NULL, 1);
        return p;
    }
    t = col_enter();
    if (!t)
        return col_real.malloc ? col_real.malloc(size) : col_boot_alloc(size, 16);
    p = COL_REAL_CALL(t, col_real.malloc(size));
    col_alloc_done(t, FMT_EV_MALLOC, p, size, NULL, 0, p == NULL);
    return p;
}

static __attribute__((noinline)) void *col_calloc(size_t nmemb, size_t elsize)
{
    struct col_thread *t = col_enter();
    uint64_t extra[2] = {nmemb, elsize};
    size_t total = 0;
    void *p;

    if (!t) {
        if (col_real.calloc)
            return col_real.calloc(nmemb, elsize);
        return __builtin_mul_overflow(nmemb, elsize, &total) ? NULL : col_boot_alloc(total, 16);
    }
    p = COL_REAL_CALL(t, col_real.calloc(nmemb, elsize));
    if (__builtin_mul_overflow(nmemb, elsize, &total))
        total = SIZE_MAX;
    col_alloc_done(t, FMT_EV_CALLOC, p, total, extra, 2, p == NULL);
    return p;
}

/* A free under sampling (is the block a sampled one?), with a stack
 * (MEMSCRIBE_FREE_STACKS=1), or whose real call must run inside the hook
 * (col_free_slow), t entered: out of line, so that the common free keeps
 * no unwind buffer and no frame. */
static __attribute__((noinline)) void col_free_rare(struct col_thread *t, void *p)
{
    uint32_t stack = 0;
    uint64_t ts;

    if (col_sample_bytes) {
        if (p)
            col_count_free(t, p);
        else
            col_count_free_null(t);
    }
    if (col_sample_bytes && !col_sample_forget(p)) {
        COL_REAL_CALL_VOID(t, col_real.free(p)); /* not a sampled block */
        col_leave(t);
        return;
    }
    col_check_modules(t);
    if (col_free_stacks)
        stack = col_stack_here(t);
    ts = col_stamp(t);
    COL_REAL_CALL_VOID(t, col_real.free(p));
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, FMT_EV_FREE, 0, 0, stack, ts,
                          (uint64_t)(uintptr_t)p, 0, NULL, 0);
    col_stamp_done(t);
    col_leave(t);
}

/* The whole hook of a free, for whatever col_free_quick leaves: stamped
 * before the real call, published after it. */
static __attribute__((noinline)) void col_free_full(void *p)
{
    struct col_thread *t = col_enter();
    uint64_t ts;

    if (!t) {
        if (col_real.free)
            col_real.free(p);
        return;
    }
    if (COL_UNLIKELY(col_free_slow)) {
        col_free_rare(t, p);
        return;
    }
    col_check_modules(t);
    ts = col_stamp(t);
    COL_REAL_CALL_VOID(t, col_real.free(p));
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, FMT_EV_FREE, 0, 0, 0, ts, (uint64_t)(uintptr_t)p, 0,
                          NULL, 0);
    col_stamp_done(t);
    col_leave(t);
}

/* The common free, with no call of its own, so that it needs no frame:
 * col_enter, col_check_modules, col_stamp and col_emit_event_inline for a
 * thread whose ring is set up and has room for the event (col_ring.room),
 * when no module poll is due. Returns 0, having done nothing, in every
 * other case (col_free_full). The event is published before the
 * real free, which the caller then makes out of the hook (a jump): the
 * block is the program's until then, so no thread can get its address
 * back and stamp that allocation before this free. glibc's free calls
 * nothing we hook, and with col_free_slow clear no thread has Syscall
 * User Dispatch on (its selector is not written). */
static inline __attribute__((always_inline)) int col_free_quick(void *p)
{
    struct col_thread *t;
    const uint32_t len = FMT_SHM_EVENT_SIZE(0);
    struct fmt_shm_event *e;
    struct col_ring *r;
    uint64_t ts;

    if (COL_UNLIKELY(col_free_slow) || !(t = col_enter_plain()))
        return 0;
    r = t->ring;
    if (COL_UNLIKELY(atomic_load_explicit(&col_modules_dirty, memory_order_relaxed) > 0 ||
                     ((t->nr_events + 1) & COL_MODULE_POLL_MASK) == 0 || r->head + len > r->room)) {
        col_leave_plain(t);
        return 0;
    }
    t->nr_events++;
    atomic_store_explicit(&r->ctl->pending, FMT_SHM_PENDING_MARKER, memory_order_release);
    ts = ms_arch_ticks();
    atomic_store_explicit(&r->ctl->pending, ts, memory_order_release);
    e = (struct fmt_shm_event *)(r->data + (r->head & (COL_RING_SIZE - 1)));
    e->type = FMT_SHM_REC_EVENT;
    e->kind = FMT_EV_FREE;
    e->flags = 0;
    e->origin_nargs = 0;
    e->stack = 0;
    e->ts_ns = ts;
    e->addr = (uint64_t)(uintptr_t)p;
    e->size = 0;
    r->head += len;
    atomic_store_explicit(&r->ctl->head, r->head, memory_order_release);
    atomic_store_explicit(&r->ctl->pending, 0, memory_order_release);
    col_leave_plain(t);
    return 1;
}

static __attribute__((noinline)) void col_free(void *p)
{
    if (COL_UNLIKELY(col_is_boot(p)))
        return;
    if (COL_LIKELY(col_free_quick(p))) {
        col_real.free(p);
        return;
    }
    col_free_full(p);
}

/* A realloc under sampling (docs/record-sampling.md), for every hook of
 * that shape (col_internal.h). Never inlined: the exact paths stay as
 * they were. */
void col_realloc_sampled_begin(struct col_thread *t, void *old, struct col_realloc_sampled *rs)
{
    rs->had = old && col_sample_forget(old);
    rs->stack = 0;
    rs->ts0 = 0;
    if (rs->had) {
        col_check_modules(t);
        rs->stack = col_stack_here(t);
        rs->ts0 = col_stamp(t);
    }
}

void *col_realloc_sampled_end(struct col_thread *t, const struct col_realloc_sampled *rs, void *old,
                              void *p, uint64_t size, uint8_t kind, uint64_t *extra, unsigned nargs)
{
    int failed = p == NULL && (size != 0 || old == NULL);
    uint32_t stack = rs->stack;
    uint64_t ts1;
    uint8_t flags = 0;

    if (failed && rs->had) {
        col_sample_note(old); /* still there, still sampled */
    } else if (p && col_sample_skip(t, p, size)) {
        if (rs->had) { /* the sampled old block ends; the new one is not recorded */
            col_emit_event_inline(t, FMT_SHM_REC_EVENT, FMT_EV_FREE, 0, 0, 0, rs->ts0,
                                  (uint64_t)(uintptr_t)old, 0, NULL, 0);
            col_stamp_done(t);
        }
        col_leave(t);
        return p;
    } else if (!rs->had && (failed ? col_sample_skip(t, NULL, size) : !p)) {
        col_leave(t); /* nothing sampled: realloc(NULL, 0) returning NULL, or a failure */
        return p;
    }
    if (!rs->had) {
        col_check_modules(t);
        stack = col_stack_here(t);
        ts1 = col_stamp(t);
        extra[0] = 0; /* the old block was not sampled: a realloc of NULL */
        flags = failed ? FMT_EVF_FAILED : col_libc_mmap_flag(p);
    } else {
        ts1 = col_now();
        if (failed) {
            flags = FMT_EVF_FAILED;
        } else if (p == old) {
            flags = FMT_EVF_IN_PLACE | col_libc_mmap_flag(p);
        } else {
            flags = col_libc_mmap_flag(p);
            col_emit_event_inline(t, FMT_SHM_REC_RELEASE, kind, 0, 0, stack, rs->ts0,
                                  (uint64_t)(uintptr_t)old, 0, NULL, 0);
        }
    }
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, kind, flags, 0, stack, ts1, (uint64_t)(uintptr_t)p,
                          size, extra, nargs);
    col_stamp_done(t);
    col_leave(t);
    return p;
}

/* realloc and reallocarray under sampling: the real call between the two
 * halves. Never inlined, as they are. */
static __attribute__((noinline)) void *
col_realloc_sampled(struct col_thread *t, void *old, size_t nmemb, size_t elsize, int is_array)
{
    uint64_t extra[3] = {(uint64_t)(uintptr_t)old, nmemb, elsize};
    size_t size = 0;
    int overflow = __builtin_mul_overflow(nmemb, elsize, &size);
    struct col_realloc_sampled rs;
    uint64_t old_usable = old && col_counters ? col_count_usable(old) : 0;
    void *p;

    col_realloc_sampled_begin(t, old, &rs);
    p = COL_REAL_CALL(t, is_array ? col_real.reallocarray(old, nmemb, elsize)
                                  : col_real.realloc(old, size));
    col_count_realloc(t, is_array ? FMT_EV_REALLOCARRAY : FMT_EV_REALLOC, old, old_usable, p,
                      overflow ? UINT64_MAX : size);
    return col_realloc_sampled_end(t, &rs, old, p, overflow ? UINT64_MAX : size,
                                   is_array ? FMT_EV_REALLOCARRAY : FMT_EV_REALLOC, extra,
                                   is_array ? 3 : 1);
}

/* realloc and reallocarray: stamp before the call (the old block may be
 * released), publish a RELEASE with that time if it was, then the
 * REALLOC with the time after. */
static inline __attribute__((always_inline)) void *col_realloc_common(void *old, size_t nmemb,
                                                                      size_t elsize, int is_array)
{
    struct col_thread *t;
    uint64_t extra[3] = {(uint64_t)(uintptr_t)old, nmemb, elsize};
    size_t size = 0;
    int overflow = __builtin_mul_overflow(nmemb, elsize, &size);
    uint8_t kind = is_array ? FMT_EV_REALLOCARRAY : FMT_EV_REALLOC;
    uint32_t stack;
    uint64_t ts0, ts1;
    uint8_t flags = 0;
    void *p;

    if (COL_UNLIKELY(col_is_boot(old))) {
        /* Moving a bootstrap block out: a plain (recorded) allocation. */
        size_t keep;

        if (overflow) {
            errno = ENOMEM;
            return NULL;
        }
        p = malloc(size);
        keep = col_boot_size(old) < size ? col_boot_size(old) : size;
        if (p)
            memcpy(p, old, keep);
        return p;
    }
    t = col_enter();
    if (!t) {
        if (is_array)
            return col_real.reallocarray ? col_real.reallocarray(old, nmemb, elsize) : NULL;
        if (col_real.realloc)
            return col_real.realloc(old, size);
        return col_boot_alloc(size, 16); /* only while dlsym runs: old is NULL */
    }
    if (COL_UNLIKELY(col_sample_bytes))
        return col_realloc_sampled(t, old, nmemb, elsize, is_array);
    col_check_modules(t);
    stack = col_stack_here(t);
    ts0 = col_stamp(t);
    p = COL_REAL_CALL(t, is_array ? col_real.reallocarray(old, nmemb, elsize)
                                  : col_real.realloc(old, size));
    ts1 = col_now();
    if (p == NULL && (size != 0 || overflow || old == NULL)) {
        flags = FMT_EVF_FAILED; /* the old block is still there */
    } else if (p == old) {
        flags = FMT_EVF_IN_PLACE;
    } else {
        flags = col_libc_mmap_flag(p);
        if (old) /* moved, or freed by realloc(old, 0): old is gone */
            col_emit_event_inline(t, FMT_SHM_REC_RELEASE, kind, 0, 0, stack, ts0,
                                  (uint64_t)(uintptr_t)old, 0, NULL, 0);
    }
    if (p == old && p)
        flags |= col_libc_mmap_flag(p);
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, kind, flags, 0, stack, ts1, (uint64_t)(uintptr_t)p,
                          overflow ? UINT64_MAX : size, extra, is_array ? 3 : 1);
    col_stamp_done(t);
    col_leave(t);
    return p;
}

static __attribute__((noinline)) void *col_realloc(void *old, size_t size)
{
    return col_realloc_common(old, size, 1, 0);
}

static __attribute__((noinline)) void *col_reallocarray(void *old, size_t nmemb, size_t elsize)
{
    return col_realloc_common(old, nmemb, elsize, 1);
}

/* The unsampled calls under sampling, counted (col_count_*): out of line,
 * so that the exported hooks keep no frame of their own on the exact
 * path and jump. */
/* The counting the common call needs (a block given by glibc's malloc, a
 * thread with its own slot), with no call after the real one: the hook
 * saves nothing but the size across it. Anything else: the general
 * col_count_* (col_count_slow). */
static __attribute__((noinline)) void *col_count_slow(unsigned kind, void *p, uint64_t size)
{
    col_count_alloc(&col_thread, kind, p, size);
    return p;
}

static inline __attribute__((always_inline)) void *col_count_lean(unsigned kind, void *p,
                                                                  uint64_t size)
{
    struct col_thread *t = &col_thread;
    struct fmt_shm_counter_slot *s = t->ctr_lean; /* implies the counters are on */

    if (COL_UNLIKELY(!p || !s))
        return col_count_slow(kind, p, size);
    uint64_t w = ((const uint64_t *)p)[-1]; /* col_count_usable, glibc's case */
    uint64_t usable = (w & ~(uint64_t)7) - 8 - (w & 2) * 4;
    uint64_t *v = s->v;
    col_count_add(0, &v[FMT_CTR_CALLS + kind], 1);
    col_count_add(0, &v[FMT_CTR_ALLOCS], 1);
    col_count_add(0, &v[FMT_CTR_ALLOC_BYTES], size);
    col_count_add(0, &v[FMT_CTR_ALLOC_USABLE], usable);
    col_count_add(0, &v[FMT_CTR_CLASS + 63 - __builtin_clzll(size | 1)], 1);
    t->last_block = (uintptr_t)p;
    t->last_size = size;
    col_count_heap(col_counters, usable, 1);
    return p;
}

static __attribute__((noinline)) void *col_malloc_counted(size_t size)
{
    return col_count_lean(FMT_EV_MALLOC, col_real.malloc(size), size);
}

static __attribute__((noinline)) void *col_calloc_counted(size_t nmemb, size_t elsize, size_t total)
{
    return col_count_lean(FMT_EV_CALLOC, col_real.calloc(nmemb, elsize), total);
}

static __attribute__((noinline)) void col_free_counted_slow(void *p)
{
    struct col_thread *t = &col_thread;

    if (!t->busy) { /* a call inside a hook is not the program's */
        if (p)
            col_count_free(t, p);
        else
            col_count_free_null(t);
    }
    col_real.free(p);
}

/* A free counted before the real call, which is then a jump: no frame. */
static __attribute__((noinline)) void col_free_counted(void *p)
{
    struct col_thread *t = &col_thread;
    struct fmt_shm_counter_slot *s = t->ctr_lean; /* implies the counters are on */

    if (COL_UNLIKELY(!p || !s || t->busy)) {
        col_free_counted_slow(p);
        return;
    }
    uint64_t w = ((const uint64_t *)p)[-1];
    uint64_t usable = (w & ~(uint64_t)7) - 8 - (w & 2) * 4;
    uint64_t *v = s->v;
    col_count_add(0, &v[FMT_CTR_CALLS + FMT_EV_FREE], 1);
    col_count_add(0, &v[FMT_CTR_FREES], 1);
    col_count_add(0, &v[FMT_CTR_FREE_USABLE], usable);
    if (t->last_block == (uintptr_t)p) {
        col_count_add(0, &v[FMT_CTR_TEMPORARY], 1);
        col_count_add(0, &v[FMT_CTR_TEMPORARY_BYTES], t->last_size);
    }
    t->last_block = 0;
    col_count_heap(col_counters, (uint64_t)0 - usable, 0);
    col_real.free(p);
}

/* The exported hooks' fast paths (a dormant image, an unsampled call)
 * sit behind one test of col_hook_fast: the exact path pays one load and
 * one branch for them. */
COL_EXPORT void *malloc(size_t size)
{
    if (COL_UNLIKELY(col_hook_fast)) {
        if (col_dormant)
            return col_real.malloc(size);
        if (col_sample_pass(size)) /* not sampled: the real call, counted */
            return col_malloc_counted(size);
    }
    return col_malloc(size);
}

COL_EXPORT void *calloc(size_t nmemb, size_t elsize)
{
    size_t total;

    if (COL_UNLIKELY(col_hook_fast)) {
        if (col_dormant)
            return col_real.calloc(nmemb, elsize);
        if (__builtin_mul_overflow(nmemb, elsize, &total))
            total = SIZE_MAX;
        if (col_sample_pass(total))
            return col_calloc_counted(nmemb, elsize, total);
    }
    return col_calloc(nmemb, elsize);
}

COL_EXPORT void free(void *p)
{
    /* A bootstrap block is never in the sampled set: col_free drops it. */
    if (COL_UNLIKELY(col_hook_fast) && !col_is_boot(p)) {
        if (col_dormant) {
            col_real.free(p);
            return;
        }
        if (col_sample_surely_not(p)) { /* not a sampled block: the real call, counted */
            col_free_counted(p);
            return;
        }
    }
    col_free(p);
}

/* Unsampled when the old block was not sampled (or NULL) and the new one
 * is not: a bootstrap block (never in the set) takes the whole hook. */
static inline __attribute__((always_inline)) int col_realloc_pass(void *old, size_t nmemb,
                                                                  size_t elsize)
{
    size_t size;

    return (!old || (!col_is_boot(old) && col_sample_surely_not(old))) &&
           col_sample_pass(__builtin_mul_overflow(nmemb, elsize, &size) ? SIZE_MAX : size);
}

/* An unsampled realloc-shaped call: the real call, counted. */
static __attribute__((noinline)) void *col_realloc_counted(void *old, size_t nmemb, size_t elsize,
                                                           int is_array)
{
    struct col_thread *t = &col_thread;
    uint64_t old_usable = old && col_counters ? col_count_usable(old) : 0;
    size_t size;
    int overflow = __builtin_mul_overflow(nmemb, elsize, &size);
    void *p = is_array ? col_real.reallocarray(old, nmemb, elsize) : col_real.realloc(old, size);

    col_count_realloc(t, is_array ? FMT_EV_REALLOCARRAY : FMT_EV_REALLOC, old, old_usable, p,
                      overflow ? UINT64_MAX : size);
    return p;
}

COL_EXPORT void *realloc(void *old, size_t size)
{
    if (COL_UNLIKELY(col_hook_fast)) {
        if (col_dormant ? !col_is_boot(old) : 0)
            return col_real.realloc(old, size);
        if (!col_dormant && col_realloc_pass(old, size, 1))
            return col_realloc_counted(old, size, 1, 0);
    }
    return col_realloc(old, size);
}

COL_EXPORT void *reallocarray(void *old, size_t nmemb, size_t elsize)
{
    if (COL_UNLIKELY(col_hook_fast)) {
        if (col_dormant ? !col_is_boot(old) : 0)
            return col_real.reallocarray(old, nmemb, elsize);
        if (!col_dormant && col_realloc_pass(old, nmemb, elsize))
            return col_realloc_counted(old, nmemb, elsize, 1);
    }
    return col_reallocarray(old, nmemb, elsize);
}

COL_EXPORT void *memalign(size_t align, size_t size)
{
    struct col_thread *t = col_enter();
    uint64_t extra[1] = {align};
    void *p;

    if (!t)
        return col_real.memalign ? col_real.memalign(align, size) : col_boot_alloc(size, align);
    p = COL_REAL_CALL(t, col_real.memalign(align, size));
    col_alloc_done(t, FMT_EV_MEMALIGN, p, size, extra, 1, p == NULL);
    return p;
}

COL_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    struct col_thread *t = col_enter();
    uint64_t extra[2] = {align, 0};
    int rc;

    if (!t) {
        if (col_real.posix_memalign)
            return col_real.posix_memalign(out, align, size);
        *out = col_boot_alloc(size, align);
        return *out ? 0 : ENOMEM;
    }
    rc = COL_REAL_CALL(t, col_real.posix_memalign(out, align, size));
    extra[1] = (uint64_t)rc;
    col_alloc_done(t, FMT_EV_POSIX_MEMALIGN, rc == 0 ? *out : NULL, size, extra, 2, rc != 0);
    return rc;
}

COL_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    struct col_thread *t = col_enter();
    uint64_t extra[1] = {align};
    void *p;

    if (!t)
        return col_real.aligned_alloc ? col_real.aligned_alloc(align, size)
                                      : col_boot_alloc(size, align);
    p = COL_REAL_CALL(t, col_real.aligned_alloc(align, size));
    col_alloc_done(t, FMT_EV_ALIGNED_ALLOC, p, size, extra, 1, p == NULL);
    return p;
}

COL_EXPORT void *valloc(size_t size)
{
    struct col_thread *t = col_enter();
    void *p;

    if (!t)
        return col_real.valloc ? col_real.valloc(size) : col_boot_alloc(size, 4096);
    p = COL_REAL_CALL(t, col_real.valloc(size));
    col_alloc_done(t, FMT_EV_VALLOC, p, size, NULL, 0, p == NULL);
    return p;
}

COL_EXPORT void *pvalloc(size_t size)
{
    struct col_thread *t = col_enter();
    void *p;

    if (!t)
        return col_real.pvalloc ? col_real.pvalloc(size) : col_boot_alloc(size, 4096);
    p = COL_REAL_CALL(t, col_real.pvalloc(size));
    col_alloc_done(t, FMT_EV_PVALLOC, p, size, NULL, 0, p == NULL);
    return p;
}
