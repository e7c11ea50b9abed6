/* SPDX-License-Identifier: MIT */
/* Allocators linked in the program instead of glibc's malloc (docs/record-programs.md,
 * "Other allocators"). Their malloc, free, ... are the hooks of
 * col_hooks_heap.c already (RTLD_NEXT finds theirs). Here: their own
 * entry points, which do not go through malloc -- C++ operator new and
 * delete (jemalloc, mimalloc and tcmalloc each define them), jemalloc's
 * *allocx, mimalloc's mi_*, tcmalloc's tc_* -- recorded as the malloc
 * family kinds they behave as.
 *
 * operator new and delete are interposed in every program; where the next
 * definition is libstdc++'s (which calls malloc, recorded there) the hook
 * only passes the call on. A C program may load libstdc++ long after it
 * started (bfd's LLVM plugin in ar and nm, a C++ module in python), so a
 * name with no definition is looked up again once the loader has loaded
 * something; where none exists at all, our own definition serves the call
 * (col_alloc_fallback.c): a hook never returns NULL where the function it
 * stands for would not. Otherwise the thread is marked busy during the
 * real call (jemalloc's aligned new calls aligned_alloc through the PLT:
 * recorded once, as the new), and a cleanup clears the mark again also
 * when the call throws (this file is built with -fexceptions).
 *
 * Under record --sample they are sampled as malloc is (col_sample_skip,
 * col_sample_forget, a realloc by col_realloc_sampled_begin/end), but
 * without malloc's fast path before col_enter(): the mark above must be
 * set around the real call either way. */
#include <stdlib.h>
#include <string.h>

#include "collector/col_alloc_fallback_internal.h"
#include "collector/col_elf_internal.h"
#include "collector/col_internal.h"

#define COL_EXPORT __attribute__((visibility("default")))

/* Each name: the definition calls go to, and whether to record them. */
struct col_next {
    const char *name;
    /* Ours, for where no loaded object defines the name: it records
     * (col_alloc_fallback_internal.h). */
    void *fallback;
    /* The definition found; NULL until one is (a C program that loads
     * libstdc++ with a plugin, long after it started). Set once. */
    _Atomic(void *) fn;
    /* 0: libstdc++'s operator new/delete, recorded in malloc. Written
     * before fn, read after it. */
    _Atomic int record;
    /* col_elf_adds() at the last search that found nothing: search again
     * only once the loader has loaded something since. */
    _Atomic unsigned long long searched;
};

/* A call to make: the function and whether to record it. */
struct col_call {
    void *fn;
    int record;
};

enum {
    /* C++ */
    N_NEW,
    N_NEW_NT,
    N_NEW_AL,
    N_NEW_AL_NT,
    N_NEWA,
    N_NEWA_NT,
    N_NEWA_AL,
    N_NEWA_AL_NT,
    N_DEL,
    N_DEL_NT,
    N_DEL_SZ,
    N_DEL_AL,
    N_DEL_AL_NT,
    N_DEL_SZ_AL,
    N_DELA,
    N_DELA_NT,
    N_DELA_SZ,
    N_DELA_AL,
    N_DELA_AL_NT,
    N_DELA_SZ_AL,
    /* jemalloc */
    N_MALLOCX,
    N_RALLOCX,
    N_DALLOCX,
    N_SDALLOCX,
    /* mimalloc */
    N_MI_MALLOC,
    N_MI_ZALLOC,
    N_MI_CALLOC,
    N_MI_REALLOC,
    N_MI_FREE,
    N_MI_MALLOC_AL,
    N_MI_ZALLOC_AL,
    N_MI_REALLOC_AL,
    N_MI_FREE_SZ,
    N_MI_FREE_AL,
    N_MI_STRDUP,
    N_MI_HEAP_MALLOC,
    N_MI_HEAP_ZALLOC,
    N_MI_HEAP_CALLOC,
    N_MI_HEAP_REALLOC,
    N_MI_HEAP_MALLOC_AL,
    /* tcmalloc */
    N_TC_MALLOC,
    N_TC_CALLOC,
    N_TC_REALLOC,
    N_TC_FREE,
    N_TC_CFREE,
    N_TC_FREE_SZ,
    N_TC_MEMALIGN,
    N_TC_POSIX_MEMALIGN,
    N_TC_NEW,
    N_TC_NEWARRAY,
    N_TC_NEW_NT,
    N_TC_NEWARRAY_NT,
    N_TC_DELETE,
    N_TC_DELETEARRAY,
    N_TC_DELETE_SZ,
    N_TC_DELETEARRAY_SZ,
    N_COUNT
};

static struct col_next col_next[N_COUNT] = {
    [N_NEW] = {.name = "_Znwm", .fallback = (void *)col_fb_new_z},
    [N_NEW_NT] = {.name = "_ZnwmRKSt9nothrow_t", .fallback = (void *)col_fb_new_zn},
    [N_NEW_AL] = {.name = "_ZnwmSt11align_val_t", .fallback = (void *)col_fb_new_zz},
    [N_NEW_AL_NT] = {.name = "_ZnwmSt11align_val_tRKSt9nothrow_t",
                     .fallback = (void *)col_fb_new_zzn},
    [N_NEWA] = {.name = "_Znam", .fallback = (void *)col_fb_new_z},
    [N_NEWA_NT] = {.name = "_ZnamRKSt9nothrow_t", .fallback = (void *)col_fb_new_zn},
    [N_NEWA_AL] = {.name = "_ZnamSt11align_val_t", .fallback = (void *)col_fb_new_zz},
    [N_NEWA_AL_NT] = {.name = "_ZnamSt11align_val_tRKSt9nothrow_t",
                      .fallback = (void *)col_fb_new_zzn},
    [N_DEL] = {.name = "_ZdlPv", .fallback = (void *)col_fb_free_p},
    [N_DEL_NT] = {.name = "_ZdlPvRKSt9nothrow_t", .fallback = (void *)col_fb_free_pn},
    [N_DEL_SZ] = {.name = "_ZdlPvm", .fallback = (void *)col_fb_free_pz},
    [N_DEL_AL] = {.name = "_ZdlPvSt11align_val_t", .fallback = (void *)col_fb_free_pz},
    [N_DEL_AL_NT] = {.name = "_ZdlPvSt11align_val_tRKSt9nothrow_t",
                     .fallback = (void *)col_fb_free_pzn},
    [N_DEL_SZ_AL] = {.name = "_ZdlPvmSt11align_val_t", .fallback = (void *)col_fb_free_pzz},
    [N_DELA] = {.name = "_ZdaPv", .fallback = (void *)col_fb_free_p},
    [N_DELA_NT] = {.name = "_ZdaPvRKSt9nothrow_t", .fallback = (void *)col_fb_free_pn},
    [N_DELA_SZ] = {.name = "_ZdaPvm", .fallback = (void *)col_fb_free_pz},
    [N_DELA_AL] = {.name = "_ZdaPvSt11align_val_t", .fallback = (void *)col_fb_free_pz},
    [N_DELA_AL_NT] = {.name = "_ZdaPvSt11align_val_tRKSt9nothrow_t",
                      .fallback = (void *)col_fb_free_pzn},
    [N_DELA_SZ_AL] = {.name = "_ZdaPvmSt11align_val_t", .fallback = (void *)col_fb_free_pzz},
    [N_MALLOCX] = {.name = "mallocx", .fallback = (void *)col_fb_mallocx},
    [N_RALLOCX] = {.name = "rallocx", .fallback = (void *)col_fb_rallocx},
    [N_DALLOCX] = {.name = "dallocx", .fallback = (void *)col_fb_free_pi},
    [N_SDALLOCX] = {.name = "sdallocx", .fallback = (void *)col_fb_free_pzi},
    [N_MI_MALLOC] = {.name = "mi_malloc", .fallback = (void *)col_fb_malloc_z},
    [N_MI_ZALLOC] = {.name = "mi_zalloc", .fallback = (void *)col_fb_zalloc_z},
    [N_MI_CALLOC] = {.name = "mi_calloc", .fallback = (void *)col_fb_calloc_zz},
    [N_MI_REALLOC] = {.name = "mi_realloc", .fallback = (void *)col_fb_realloc_pz},
    [N_MI_FREE] = {.name = "mi_free", .fallback = (void *)col_fb_free_p},
    [N_MI_MALLOC_AL] = {.name = "mi_malloc_aligned", .fallback = (void *)col_fb_aligned_zz},
    [N_MI_ZALLOC_AL] = {.name = "mi_zalloc_aligned", .fallback = (void *)col_fb_zaligned_zz},
    [N_MI_REALLOC_AL] = {.name = "mi_realloc_aligned",
                         .fallback = (void *)col_fb_realloc_aligned_pzz},
    [N_MI_FREE_SZ] = {.name = "mi_free_size", .fallback = (void *)col_fb_free_pz},
    [N_MI_FREE_AL] = {.name = "mi_free_aligned", .fallback = (void *)col_fb_free_pz},
    [N_MI_STRDUP] = {.name = "mi_strdup", .fallback = (void *)col_fb_strdup},
    [N_MI_HEAP_MALLOC] = {.name = "mi_heap_malloc", .fallback = (void *)col_fb_heap_malloc},
    [N_MI_HEAP_ZALLOC] = {.name = "mi_heap_zalloc", .fallback = (void *)col_fb_heap_zalloc},
    [N_MI_HEAP_CALLOC] = {.name = "mi_heap_calloc", .fallback = (void *)col_fb_heap_calloc},
    [N_MI_HEAP_REALLOC] = {.name = "mi_heap_realloc", .fallback = (void *)col_fb_heap_realloc},
    [N_MI_HEAP_MALLOC_AL] = {.name = "mi_heap_malloc_aligned",
                             .fallback = (void *)col_fb_heap_aligned},
    [N_TC_MALLOC] = {.name = "tc_malloc", .fallback = (void *)col_fb_malloc_z},
    [N_TC_CALLOC] = {.name = "tc_calloc", .fallback = (void *)col_fb_calloc_zz},
    [N_TC_REALLOC] = {.name = "tc_realloc", .fallback = (void *)col_fb_realloc_pz},
    [N_TC_FREE] = {.name = "tc_free", .fallback = (void *)col_fb_free_p},
    [N_TC_CFREE] = {.name = "tc_cfree", .fallback = (void *)col_fb_free_p},
    [N_TC_FREE_SZ] = {.name = "tc_free_sized", .fallback = (void *)col_fb_free_pz},
    [N_TC_MEMALIGN] = {.name = "tc_memalign", .fallback = (void *)col_fb_memalign_zz},
    [N_TC_POSIX_MEMALIGN] = {.name = "tc_posix_memalign",
                             .fallback = (void *)col_fb_posix_memalign_pzz},
    [N_TC_NEW] = {.name = "tc_new", .fallback = (void *)col_fb_new_z},
    [N_TC_NEWARRAY] = {.name = "tc_newarray", .fallback = (void *)col_fb_new_z},
    [N_TC_NEW_NT] = {.name = "tc_new_nothrow", .fallback = (void *)col_fb_new_zn},
    [N_TC_NEWARRAY_NT] = {.name = "tc_newarray_nothrow", .fallback = (void *)col_fb_new_zn},
    [N_TC_DELETE] = {.name = "tc_delete", .fallback = (void *)col_fb_free_p},
    [N_TC_DELETEARRAY] = {.name = "tc_deletearray", .fallback = (void *)col_fb_free_p},
    [N_TC_DELETE_SZ] = {.name = "tc_delete_sized", .fallback = (void *)col_fb_free_pz},
    [N_TC_DELETEARRAY_SZ] = {.name = "tc_deletearray_sized", .fallback = (void *)col_fb_free_pz},
};

static _Atomic int col_next_done;

/* Look name i up among the loaded objects (col_elf_find: also those a
 * dlopen brought in with RTLD_LOCAL, such as the libstdc++ of a C
 * program's C++ plugin, which dlsym(RTLD_NEXT) does not see). */
static void col_next_search(int i, unsigned long long adds)
{
    struct col_next *n = &col_next[i];
    const char *module, *base;
    void *fn = col_elf_find(n->name, &module);

    if (!fn) {
        atomic_store_explicit(&n->searched, adds, memory_order_relaxed);
        return;
    }
    base = strrchr(module, '/');
    base = base ? base + 1 : module;
    atomic_store_explicit(&n->record, i > N_DELA_SZ_AL || strncmp(base, "libstdc++", 9) != 0,
                          memory_order_relaxed);
    atomic_store_explicit(&n->fn, fn, memory_order_release);
}

/* Look every name up once (col_resolve, or the first call if it comes
 * earlier: a constructor's new before ours). */
void col_alloc_resolve(void)
{
    unsigned long long adds = col_elf_adds();

    for (int i = 0; i < N_COUNT; i++)
        if (!atomic_load_explicit(&col_next[i].fn, memory_order_acquire))
            col_next_search(i, adds);
    atomic_store(&col_next_done, 1);
}

/* Name i has no definition yet: search again if anything was loaded since
 * the last search, else make the call ours. */
static __attribute__((noinline, cold)) struct col_call col_next_late(int i)
{
    struct col_next *n = &col_next[i];
    int busy = col_thread.busy;
    unsigned long long adds;
    void *fn;

    col_thread.busy = 1;
    adds = col_elf_adds();
    if (adds != atomic_load_explicit(&n->searched, memory_order_relaxed))
        col_next_search(i, adds);
    col_thread.busy = busy;
    fn = atomic_load_explicit(&n->fn, memory_order_acquire);
    if (fn)
        return (struct col_call){fn, atomic_load_explicit(&n->record, memory_order_relaxed)};
    return (struct col_call){n->fallback, 1};
}

static inline struct col_call col_next_get(int i)
{
    void *fn;

    if (COL_UNLIKELY(!atomic_load_explicit(&col_next_done, memory_order_acquire))) {
        int busy = col_thread.busy;

        col_thread.busy = 1;
        col_alloc_resolve();
        col_thread.busy = busy;
    }
    fn = atomic_load_explicit(&col_next[i].fn, memory_order_acquire);
    if (COL_LIKELY(fn))
        return (struct col_call){fn,
                                 atomic_load_explicit(&col_next[i].record, memory_order_relaxed)};
    return col_next_late(i);
}

/* Mark the thread busy for the real call of a recorded entry point; the
 * cleanup puts the mark back as it was, on return or an exception. */
static inline void col_x_unhold(int *was)
{
    if (*was >= 0)
        col_thread.busy = *was;
}
#define COL_X_HOLD(record)                                                                         \
    __attribute__((cleanup(col_x_unhold))) int col_held_ = (record) ? col_thread.busy : -1;        \
    if (col_held_ >= 0)                                                                            \
    col_thread.busy = 1
#define COL_X_UNHOLD() (col_x_unhold(&col_held_), col_held_ = -1)

/* Record an allocation that returned p (the call is made). Inlined: the
 * stack is unwound from the hook's frame. */
static inline __attribute__((always_inline)) void
col_x_alloc(int record, uint8_t kind, void *p, uint64_t size, const uint64_t *extra, unsigned nargs)
{
    struct col_thread *t;
    uint32_t stack;
    uint64_t ts;

    if (!record || !(t = col_enter()))
        return;
    col_count_uncounted();
    if (COL_UNLIKELY(col_sample_bytes) && col_sample_skip(t, p, size)) {
        col_leave(t); /* not sampled: no unwind, no event (col_hooks_heap.c) */
        return;
    }
    stack = col_stack_here(t);
    ts = col_stamp(t);
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, kind, p ? 0 : FMT_EVF_FAILED, 0, stack, ts,
                          (uint64_t)(uintptr_t)p, size, extra, nargs);
    col_stamp_done(t);
    col_leave(t);
}

/* A free: stamped before the real call, as free() is. Returns the thread
 * to leave after the call, or NULL (also for a block sampling left out). */
static inline __attribute__((always_inline)) struct col_thread *col_x_free_start(int record,
                                                                                 void *p)
{
    struct col_thread *t;
    uint32_t stack = 0;

    if (!record || !(t = col_enter()))
        return NULL;
    col_count_uncounted();
    if (COL_UNLIKELY(col_sample_bytes) && !col_sample_forget(p)) {
        col_leave(t); /* not a sampled block */
        return NULL;
    }
    if (col_free_stacks)
        stack = col_stack_here(t);
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, FMT_EV_FREE, 0, 0, stack, col_stamp(t),
                          (uint64_t)(uintptr_t)p, 0, NULL, 0);
    return t;
}

static inline void col_x_free_end(struct col_thread *t)
{
    if (t) {
        col_stamp_done(t);
        col_leave(t);
    }
}

/* A realloc, entered and stamped (ts0) before the real call: the old
 * block's RELEASE with that time when it moved, then the REALLOC (old
 * address in arg[0]). */
static inline __attribute__((always_inline)) void
col_x_realloc(struct col_thread *t, void *old, void *p, uint64_t size, uint64_t ts0)
{
    uint64_t extra[1] = {(uint64_t)(uintptr_t)old};
    uint8_t flags;
    uint32_t stack;

    if (!t)
        return;
    stack = col_stack_here(t);
    flags = p == NULL && (size || !old) ? FMT_EVF_FAILED : p == old ? FMT_EVF_IN_PLACE : 0;
    if (old && !flags)
        col_emit_event_inline(t, FMT_SHM_REC_RELEASE, FMT_EV_REALLOC, 0, 0, stack, ts0,
                              (uint64_t)(uintptr_t)old, 0, NULL, 0);
    col_emit_event_inline(t, FMT_SHM_REC_EVENT, FMT_EV_REALLOC, flags, 0, stack, col_now(),
                          (uint64_t)(uintptr_t)p, size, extra, 1);
    col_stamp_done(t);
    col_leave(t);
}

/* Hooks by shape: NAME(ARGS) calls the next definition with CALLARGS. */
#define COL_X_ALLOC(ret_name, idx, params, type, args, kind, size_expr, nargs, ...)                \
    COL_EXPORT void *ret_name params;                                                              \
    COL_EXPORT void *ret_name params                                                               \
    {                                                                                              \
        struct col_call n = col_next_get(idx);                                                     \
        void *p;                                                                                   \
                                                                                                   \
        {                                                                                          \
            COL_X_HOLD(n.record);                                                                  \
            p = ((void *(*)type)n.fn)args;                                                         \
            COL_X_UNHOLD();                                                                        \
        }                                                                                          \
        {                                                                                          \
            uint64_t extra[nargs ? nargs : 1] = {__VA_ARGS__};                                     \
            col_x_alloc(n.record, kind, p, size_expr, extra, nargs);                               \
        }                                                                                          \
        return p;                                                                                  \
    }

#define COL_X_FREE(ret_name, idx, params, type, args, ptr)                                         \
    COL_EXPORT void ret_name params;                                                               \
    COL_EXPORT void ret_name params                                                                \
    {                                                                                              \
        struct col_call n = col_next_get(idx);                                                     \
        struct col_thread *t;                                                                      \
                                                                                                   \
        if (!n.record) {                                                                           \
            ((void(*) type)n.fn) args;                                                             \
            return;                                                                                \
        }                                                                                          \
        t = col_x_free_start(1, ptr);                                                              \
        ((void(*) type)n.fn) args;                                                                 \
        col_x_free_end(t);                                                                         \
    }

#define COL_X_REALLOC(ret_name, idx, params, type, args, old, size_expr)                           \
    COL_EXPORT void *ret_name params;                                                              \
    COL_EXPORT void *ret_name params                                                               \
    {                                                                                              \
        struct col_call n = col_next_get(idx);                                                     \
        struct col_thread *t;                                                                      \
        uint64_t ts0 = 0;                                                                          \
        void *p;                                                                                   \
                                                                                                   \
        t = n.record ? col_enter() : NULL;                                                         \
        if (t && COL_UNLIKELY(col_sample_bytes)) {                                                 \
            uint64_t extra[1] = {(uint64_t)(uintptr_t)old};                                        \
            struct col_realloc_sampled rs;                                                         \
                                                                                                   \
            col_count_uncounted();                                                                 \
            col_realloc_sampled_begin(t, old, &rs);                                                \
            p = ((void *(*)type)n.fn)args;                                                         \
            return col_realloc_sampled_end(t, &rs, old, p, size_expr, FMT_EV_REALLOC, extra, 1);   \
        }                                                                                          \
        if (t)                                                                                     \
            ts0 = col_stamp(t);                                                                    \
        p = ((void *(*)type)n.fn)args;                                                             \
        col_x_realloc(t, old, p, size_expr, ts0);                                                  \
        return p;                                                                                  \
    }

/* C++ (operator new(size_t, align_val_t): align_val_t is a size_t enum). */
COL_X_ALLOC(_Znwm, N_NEW, (size_t s), (size_t), (s), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(_Znam, N_NEWA, (size_t s), (size_t), (s), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(_ZnwmRKSt9nothrow_t, N_NEW_NT, (size_t s, const void *nt), (size_t, const void *),
            (s, nt), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(_ZnamRKSt9nothrow_t, N_NEWA_NT, (size_t s, const void *nt), (size_t, const void *),
            (s, nt), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(_ZnwmSt11align_val_t, N_NEW_AL, (size_t s, size_t al), (size_t, size_t), (s, al),
            FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_ALLOC(_ZnamSt11align_val_t, N_NEWA_AL, (size_t s, size_t al), (size_t, size_t), (s, al),
            FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_ALLOC(_ZnwmSt11align_val_tRKSt9nothrow_t, N_NEW_AL_NT, (size_t s, size_t al, const void *nt),
            (size_t, size_t, const void *), (s, al, nt), FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_ALLOC(_ZnamSt11align_val_tRKSt9nothrow_t, N_NEWA_AL_NT, (size_t s, size_t al, const void *nt),
            (size_t, size_t, const void *), (s, al, nt), FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_FREE(_ZdlPv, N_DEL, (void *p), (void *), (p), p)
COL_X_FREE(_ZdaPv, N_DELA, (void *p), (void *), (p), p)
COL_X_FREE(_ZdlPvRKSt9nothrow_t, N_DEL_NT, (void *p, const void *nt), (void *, const void *),
           (p, nt), p)
COL_X_FREE(_ZdaPvRKSt9nothrow_t, N_DELA_NT, (void *p, const void *nt), (void *, const void *),
           (p, nt), p)
COL_X_FREE(_ZdlPvm, N_DEL_SZ, (void *p, size_t s), (void *, size_t), (p, s), p)
COL_X_FREE(_ZdaPvm, N_DELA_SZ, (void *p, size_t s), (void *, size_t), (p, s), p)
COL_X_FREE(_ZdlPvSt11align_val_t, N_DEL_AL, (void *p, size_t al), (void *, size_t), (p, al), p)
COL_X_FREE(_ZdaPvSt11align_val_t, N_DELA_AL, (void *p, size_t al), (void *, size_t), (p, al), p)
COL_X_FREE(_ZdlPvSt11align_val_tRKSt9nothrow_t, N_DEL_AL_NT, (void *p, size_t al, const void *nt),
           (void *, size_t, const void *), (p, al, nt), p)
COL_X_FREE(_ZdaPvSt11align_val_tRKSt9nothrow_t, N_DELA_AL_NT, (void *p, size_t al, const void *nt),
           (void *, size_t, const void *), (p, al, nt), p)
COL_X_FREE(_ZdlPvmSt11align_val_t, N_DEL_SZ_AL, (void *p, size_t s, size_t al),
           (void *, size_t, size_t), (p, s, al), p)
COL_X_FREE(_ZdaPvmSt11align_val_t, N_DELA_SZ_AL, (void *p, size_t s, size_t al),
           (void *, size_t, size_t), (p, s, al), p)

/* jemalloc: flags' low 6 bits are lg(alignment) (MALLOCX_LG_ALIGN), bit 6
 * zeroes (MALLOCX_ZERO). An aligned mallocx is an aligned_alloc. */
#define COL_JE_ALIGN(flags) ((flags)&0x3f ? (uint64_t)1 << ((flags)&0x3f) : 0)
COL_EXPORT void *mallocx(size_t size, int flags);
COL_EXPORT void *mallocx(size_t size, int flags)
{
    struct col_call n = col_next_get(N_MALLOCX);
    uint64_t extra[1] = {COL_JE_ALIGN(flags)};
    void *p;

    {
        COL_X_HOLD(n.record);
        p = ((void *(*)(size_t, int))n.fn)(size, flags);
        COL_X_UNHOLD();
    }
    col_x_alloc(n.record, extra[0] ? FMT_EV_ALIGNED_ALLOC : FMT_EV_MALLOC, p, size, extra,
                extra[0] ? 1 : 0);
    return p;
}
COL_X_REALLOC(rallocx, N_RALLOCX, (void *old, size_t s, int fl), (void *, size_t, int),
              (old, s, fl), old, s)
COL_X_FREE(dallocx, N_DALLOCX, (void *p, int fl), (void *, int), (p, fl), p)
COL_X_FREE(sdallocx, N_SDALLOCX, (void *p, size_t s, int fl), (void *, size_t, int), (p, s, fl), p)

/* mimalloc */
COL_X_ALLOC(mi_malloc, N_MI_MALLOC, (size_t s), (size_t), (s), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(mi_zalloc, N_MI_ZALLOC, (size_t s), (size_t), (s), FMT_EV_CALLOC, s, 2, 1, s)
COL_X_ALLOC(mi_calloc, N_MI_CALLOC, (size_t c, size_t s), (size_t, size_t), (c, s), FMT_EV_CALLOC,
            c *s, 2, c, s)
COL_X_ALLOC(mi_malloc_aligned, N_MI_MALLOC_AL, (size_t s, size_t al), (size_t, size_t), (s, al),
            FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_ALLOC(mi_zalloc_aligned, N_MI_ZALLOC_AL, (size_t s, size_t al), (size_t, size_t), (s, al),
            FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_ALLOC(mi_strdup, N_MI_STRDUP, (const char *str), (const char *), (str), FMT_EV_MALLOC,
            str ? strlen(str) + 1 : 0, 0, 0)
COL_X_REALLOC(mi_realloc, N_MI_REALLOC, (void *old, size_t s), (void *, size_t), (old, s), old, s)
COL_X_REALLOC(mi_realloc_aligned, N_MI_REALLOC_AL, (void *old, size_t s, size_t al),
              (void *, size_t, size_t), (old, s, al), old, s)
COL_X_FREE(mi_free, N_MI_FREE, (void *p), (void *), (p), p)
COL_X_FREE(mi_free_size, N_MI_FREE_SZ, (void *p, size_t s), (void *, size_t), (p, s), p)
COL_X_FREE(mi_free_aligned, N_MI_FREE_AL, (void *p, size_t al), (void *, size_t), (p, al), p)

/* mimalloc heaps of the program's own (their blocks are freed with mi_free) */
COL_X_ALLOC(mi_heap_malloc, N_MI_HEAP_MALLOC, (void *h, size_t s), (void *, size_t), (h, s),
            FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(mi_heap_zalloc, N_MI_HEAP_ZALLOC, (void *h, size_t s), (void *, size_t), (h, s),
            FMT_EV_CALLOC, s, 2, 1, s)
COL_X_ALLOC(mi_heap_calloc, N_MI_HEAP_CALLOC, (void *h, size_t c, size_t s),
            (void *, size_t, size_t), (h, c, s), FMT_EV_CALLOC, c *s, 2, c, s)
COL_X_ALLOC(mi_heap_malloc_aligned, N_MI_HEAP_MALLOC_AL, (void *h, size_t s, size_t al),
            (void *, size_t, size_t), (h, s, al), FMT_EV_ALIGNED_ALLOC, s, 1, al)
COL_X_REALLOC(mi_heap_realloc, N_MI_HEAP_REALLOC, (void *h, void *old, size_t s),
              (void *, void *, size_t), (h, old, s), old, s)

/* tcmalloc */
COL_X_ALLOC(tc_malloc, N_TC_MALLOC, (size_t s), (size_t), (s), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(tc_calloc, N_TC_CALLOC, (size_t c, size_t s), (size_t, size_t), (c, s), FMT_EV_CALLOC,
            c *s, 2, c, s)
COL_X_ALLOC(tc_memalign, N_TC_MEMALIGN, (size_t al, size_t s), (size_t, size_t), (al, s),
            FMT_EV_MEMALIGN, s, 1, al)
COL_X_ALLOC(tc_new, N_TC_NEW, (size_t s), (size_t), (s), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(tc_newarray, N_TC_NEWARRAY, (size_t s), (size_t), (s), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(tc_new_nothrow, N_TC_NEW_NT, (size_t s, const void *nt), (size_t, const void *),
            (s, nt), FMT_EV_MALLOC, s, 0, 0)
COL_X_ALLOC(tc_newarray_nothrow, N_TC_NEWARRAY_NT, (size_t s, const void *nt),
            (size_t, const void *), (s, nt), FMT_EV_MALLOC, s, 0, 0)
COL_X_REALLOC(tc_realloc, N_TC_REALLOC, (void *old, size_t s), (void *, size_t), (old, s), old, s)
COL_X_FREE(tc_free, N_TC_FREE, (void *p), (void *), (p), p)
COL_X_FREE(tc_cfree, N_TC_CFREE, (void *p), (void *), (p), p)
COL_X_FREE(tc_free_sized, N_TC_FREE_SZ, (void *p, size_t s), (void *, size_t), (p, s), p)
COL_X_FREE(tc_delete, N_TC_DELETE, (void *p), (void *), (p), p)
COL_X_FREE(tc_deletearray, N_TC_DELETEARRAY, (void *p), (void *), (p), p)
COL_X_FREE(tc_delete_sized, N_TC_DELETE_SZ, (void *p, size_t s), (void *, size_t), (p, s), p)
COL_X_FREE(tc_deletearray_sized, N_TC_DELETEARRAY_SZ, (void *p, size_t s), (void *, size_t), (p, s),
           p)

COL_EXPORT int tc_posix_memalign(void **out, size_t al, size_t s);
COL_EXPORT int tc_posix_memalign(void **out, size_t al, size_t s)
{
    struct col_call n = col_next_get(N_TC_POSIX_MEMALIGN);
    uint64_t extra[2] = {al, 0};
    int rc;

    {
        COL_X_HOLD(n.record);
        rc = ((int (*)(void **, size_t, size_t))n.fn)(out, al, s);
        COL_X_UNHOLD();
    }
    extra[1] = (uint64_t)rc;
    col_x_alloc(n.record, FMT_EV_POSIX_MEMALIGN, rc == 0 ? *out : NULL, s, extra, 2);
    return rc;
}
