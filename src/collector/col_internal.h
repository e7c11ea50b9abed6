/* SPDX-License-Identifier: MIT */
/* What the collector's files share: the real functions, per-thread and
 * per-process state, the ring writer, stacks and modules. Nothing here may
 * malloc, use stdio or lazy TLS (STYLE.md, Inside a hook). */
#ifndef COL_INTERNAL_H
#define COL_INTERNAL_H

#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "format/fmt_shm.h"
#include "util/util_arch.h"
#ifndef COL_UNWIND_LIBGCC
#include "collector/col_unwind_internal.h"
#endif

#define COL_LIKELY(x) __builtin_expect(!!(x), 1)
#define COL_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Initial-exec TLS costs nothing to reach, but a library dlopen'ed into a
 * running program (the attach build, COL_ATTACH) gets it only from
 * glibc's small static TLS surplus: that build takes the model its
 * compiler flags give (TLS descriptors, docs/record-attach.md). */
#ifdef COL_ATTACH
#define COL_TLS __thread
#else
#define COL_TLS __attribute__((tls_model("initial-exec"))) __thread
#endif
/* Where the real functions are looked up: the next object after us when
 * preloaded; attached, we are in no global scope, and the real ones are
 * whatever the program's symbols resolve to. */
#ifdef COL_ATTACH
#define COL_RTLD_NEXT RTLD_DEFAULT
#else
#define COL_RTLD_NEXT RTLD_NEXT
#endif

/* Ring geometry: rings of 4 MiB; segment i holds col_segment_rings(i)
 * of them (1, 1, 2, 4, 8, then 16), so a single-threaded program maps one
 * ring, not 64 MiB of address space (docs/protocol.md). The memfd is
 * sparse, so a ring costs memory only as far as it has been written. */
#define COL_MAX_RINGS_PER_SEGMENT 16
#ifndef COL_RING_SIZE /* tests/unit/test_tsan_rings.c builds the ring code with small rings */
#define COL_RING_SIZE (4u << 20)
#endif
#define COL_MAX_SEGMENTS FMT_SHM_MAX_SEGMENTS

/* Per-ring cache of recently seen stacks: 1024 entries of 16 bytes, the
 * ring's last stack, and what its last unwind read (col_stack.c). */
#define COL_STACK_CACHE_ENTRIES 1024

/* The real functions, resolved with dlsym(RTLD_NEXT) at init. */
struct col_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    void (*free)(void *);
    void *(*memalign)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    void *(*mmap64)(void *, size_t, int, int, int, off64_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    int (*mprotect)(void *, size_t, int);
    int (*brk)(void *);
    void *(*sbrk)(intptr_t);
    void *(*dlopen)(const char *, int);
    int (*dlclose)(void *);
    int (*pthread_setname_np)(unsigned long, const char *);
    void (*_exit)(int) __attribute__((noreturn));
};
extern struct col_real col_real;

/* A ring as its producer sees it (private memory). */
struct col_ring {
    struct fmt_shm_ring_ctl *ctl;
    unsigned char *data;
    struct fmt_shm_header *seg; /* for the drop counter and recorder pid */
    uint64_t head;              /* producer's copy of ctl->head */
    uint64_t cached_tail;       /* last tail read; refreshed only when short of room */
    /* head may grow to here with no other check: the end of head's lap
     * of the ring (no PAD needed) and at most COL_RING_SIZE past
     * cached_tail. 0: not worked out yet (col_ring_reserve_slow). */
    uint64_t room;
    struct col_stack_cache *cache;
    uint32_t index; /* ring index within its segment */
};

#define COL_SUD_ALLOW 0 /* SYSCALL_DISPATCH_FILTER_ALLOW */
#define COL_SUD_BLOCK 1 /* SYSCALL_DISPATCH_FILTER_BLOCK */

/* Per-thread state: initial-exec TLS, zero in a new thread. */
struct col_thread {
    int busy;              /* inside a hook: nested calls pass straight through */
    uint32_t gen;          /* process generation this ring belongs to */
    struct col_ring *ring; /* NULL until the first event */
    pid_t tid;
    uint32_t nr_events; /* wraps; paces the module poll */
    /* Syscall User Dispatch (col_sud.c). sud_sel is the byte the kernel
     * reads on every syscall of this thread: BLOCK traps it. Collector code
     * runs with ALLOW; program code and the real heap calls with
     * sud_rearm (BLOCK once dispatch is on for the thread). */
    volatile uint8_t sud_sel;
    uint8_t sud_rearm;
    uint8_t sud_in_real; /* inside a heap hook's real call: its mappings are libc's */
    uint8_t sud_scope;   /* origin forced for trapped calls (pthread_create: THREAD) */
    /* 1 while a program's SA_ONSTACK handler runs from ours with dispatch
     * off: the rearm value to restore and the alternate stack it runs on.
     * A handler that leaves by longjmp never returns to ours; the next
     * hook entered off that stack restores it (col_sud_onstack_left). */
    uint8_t sud_onstack;
    uint8_t sud_onstack_rearm;
    /* The thread's clock (col_clock.c): clock_known once the kernel was
     * asked (PR_GET_TSC); clock_sys: it may not read the TSC, its stamps
     * come from the clock_gettime system call. */
    uint8_t clock_known;
    uint8_t clock_sys;
    uintptr_t sud_alt_lo, sud_alt_hi;
    /* Sampling (col_sample.c): bytes left to the next sampling point, and
     * the thread's generator (0: not seeded yet). */
    uint64_t sample_left;
    uint64_t sample_rng;
    /* Exact counters under sampling (col_count.c): the thread's slot (NULL
     * until its first counted call; ctr_shared: slot 0, which every thread
     * that found no slot of its own adds to atomically; ctr_lean: the
     * slot again when it is the thread's own and the real malloc is
     * glibc's, the one test of the hooks' common path, else NULL), and
     * for the temporary rule its latest block if its latest heap call was
     * an allocation (else 0) and that block's requested size. */
    struct fmt_shm_counter_slot *ctr;
    struct fmt_shm_counter_slot *ctr_lean;
    int ctr_shared;
    uintptr_t last_block;
    uint64_t last_size;
};
extern COL_TLS struct col_thread col_thread;

/* Process state, in a page marked MADV_WIPEONFORK: a forked child reads
 * gen == 0 and starts its own stream. */
struct col_process {
    uint32_t gen; /* 0: not started in this process */
    pid_t pid;
    uint64_t stream_id;
};
extern struct col_process *col_proc;

enum col_state { COL_UNINIT, COL_INITIALISING, COL_READY, COL_OFF };
extern _Atomic int col_state;

/* Settings from the environment, read once at init. */
extern uint32_t col_depth;
extern int col_no_follow;
/* record --only did not pick this image: every hook goes straight to the
 * real function (col_only.c). Set once, before the program runs. */
extern int col_dormant;
extern int col_free_stacks; /* MEMSCRIBE_FREE_STACKS=1: unwind on free too */
/* No Syscall User Dispatch and times are rdtsc that every thread may read
 * (col_clock_fast): malloc and free take their plain paths
 * (col_enter_plain), whose stamp is a bare rdtsc. Set at init and when a
 * thread is found without the TSC (col_hook_update). */
extern int col_hook_plain;
/* free() publishes its event and then jumps to the real free, out of the
 * hook (col_hooks_heap.c), unless this is set: not col_hook_plain (with
 * dispatch the real call must run inside the hook, so that what it maps
 * is marked as libc's), sampling, free stacks, or a real free that is not
 * glibc's (it may call functions we hook, which must pass straight
 * through). Set at init (col_hook_update). */
extern int col_free_slow;
void col_hook_update(void);
extern int col_glibc_malloc; /* the real malloc is glibc's: its chunk headers may be read */
/* After a dlopen, this many events each check whether the module set
 * changed; every COL_MODULE_POLL_MASK+1 events of a thread check anyway
 * (libc's own dlopen of NSS modules and the like). */
extern _Atomic int col_modules_dirty;
#define COL_MODULE_WATCH 1024
#define COL_MODULE_POLL_MASK 0xffffu

extern int col_clock_tsc; /* MEMSCRIBE_CLOCK=tsc: times are rdtsc ticks */
/* col_clock.c: col_clock_tsc, and no thread of the process was found
 * unable to read the TSC: every thread stamps with a plain rdtsc. */
extern int col_clock_fast;
/* The thread's stamp when not col_clock_fast: rdtsc, the vDSO's
 * CLOCK_MONOTONIC, or for a thread that may not read the TSC the
 * clock_gettime system call (FMT_SHM_TS_SYSCLOCK). Asks the kernel about
 * the thread first if nobody has yet: callable from any thread, inside a
 * hook or not (an exit, a message). */
uint64_t col_now_slow(void);
/* Ask the kernel whether t may read the TSC (PR_GET_TSC), at its first
 * event: a thread inherits PR_TSC_SIGSEGV from the one that created it. */
void col_clock_thread(struct col_thread *t);
/* t may not read the TSC from now on (it is about to ask PR_TSC_SIGSEGV). */
void col_clock_thread_off(struct col_thread *t);
/* col_clock_fast from col_clock_tsc, once the settings are read. */
void col_clock_settings(void);

/* The time stamp of an event, in a hook whose thread started
 * (col_enter): rdtsc when the recorder chose it (the kernel itself runs on
 * a stable TSC; 9 ns against 21 for the vDSO clock) and every thread may
 * read it, else col_now_slow(). */
static inline uint64_t col_now(void)
{
    if (COL_LIKELY(col_clock_fast))
        return ms_arch_ticks();
    return col_now_slow();
}

/* col_sud.c: if the thread is off the alternate stack its SA_ONSTACK
 * handler ran on, that handler was left by longjmp: dispatch is re-armed. */
void col_sud_onstack_left(struct col_thread *t);

/* col_state.c */
struct col_thread *col_enter_slow(struct col_thread *t);
void col_init(void);
void col_turn_off(const char *why, int err);
void col_say(const char *msg, int err);
#ifdef COL_ATTACH
/* record -p (col_attach.c, col_attach_got.c). A second attach after a
 * detach: a new recorder, a fresh stream. 0, -ENOTSUP if it asks for
 * another sampling rate than the first, -EIO. */
int col_attach_restart(void);
/* Point every loaded module's GOT entries of the functions we export at
 * ours (entries patched before are skipped: called again after a dlopen).
 * begin: a new attach (else nothing is done after col_attach_restore).
 * 0, or -1 if our own exports cannot be read. */
int col_attach_patch(int begin);
/* Put back what the entries held, in the modules still loaded; returns
 * how many were put back. */
uint32_t col_attach_restore(void);
/* libc's dlsym(handle, name), after patching the modules loaded since the
 * last look: a plugin's functions are called through what dlsym returns,
 * before any event of ours would notice the dlopen. */
void *col_attach_dlsym(void *handle, const char *name);
/* The recorder is gone (killed: nobody will detach): a later record -p
 * may attach again. */
void col_attach_orphan(void);
#endif

/* col_only.c */
int col_only_wanted(void);

/* col_hooks_sys.c: the real prctl and syscall, for the hooks that watch
 * them. */
void col_sys_resolve(void);
/* col_state.c: take our own path out of LD_PRELOAD, in place, so that
 * the images this process execs are not traced (--no-follow, a seccomp
 * filter that forbids our calls). */
void col_strip_preload(void);

/* Enter a hook: the thread's state if the call is to be recorded, or NULL
 * if it is nested, the collector is off or not yet started. A non-NULL
 * result must be paired with col_leave(). */
static inline struct col_thread *col_enter(void)
{
    struct col_thread *t = &col_thread;

    if (COL_UNLIKELY(col_dormant))
        return NULL;
    if (COL_UNLIKELY(t->busy))
        return NULL;
    t->busy = 1;
    t->sud_sel = COL_SUD_ALLOW; /* our own syscalls never trap */
    if (COL_UNLIKELY(t->sud_onstack))
        col_sud_onstack_left(t);
    if (COL_LIKELY(col_proc && t->ring && t->gen == col_proc->gen))
        return t;
    t = col_enter_slow(t);
    if (!t) {
        col_thread.busy = 0;
        col_thread.sud_sel = col_thread.sud_rearm;
    }
    return t;
}

static inline void col_leave(struct col_thread *t)
{
    t->busy = 0;
    t->sud_sel = t->sud_rearm;
}

/* col_enter for a hook's plain path (col_hook_plain set): the thread's
 * state if its ring is set up in this process and it is not in a hook,
 * else NULL (the whole hook then decides). A thread with a ring is in a
 * started process (col_proc is set; a dormant image has no rings), and
 * without dispatch its selector is never read. Pair with
 * col_leave_plain(). */
static inline __attribute__((always_inline)) struct col_thread *col_enter_plain(void)
{
    struct col_thread *t = &col_thread;

    if (COL_UNLIKELY(t->busy) || !t->ring || t->gen != col_proc->gen)
        return NULL;
    t->busy = 1;
    /* A signal handler's hook runs before this point or passes through. */
    atomic_signal_fence(memory_order_seq_cst);
    return t;
}

static inline __attribute__((always_inline)) void col_leave_plain(struct col_thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    t->busy = 0;
}

/* Call a real heap function with dispatch armed: the mmap, brk, munmap it
 * issues inside libc trap and are recorded as libc-internal (col_sud.c). */
#define COL_REAL_CALL(t, call)                                                                     \
    __extension__({                                                                                \
        (t)->sud_in_real = 1;                                                                      \
        (t)->sud_sel = (t)->sud_rearm;                                                             \
        __typeof__(call) col_r_ = (call);                                                          \
        (t)->sud_sel = COL_SUD_ALLOW;                                                              \
        (t)->sud_in_real = 0;                                                                      \
        col_r_;                                                                                    \
    })
#define COL_REAL_CALL_VOID(t, call)                                                                \
    do {                                                                                           \
        (t)->sud_in_real = 1;                                                                      \
        (t)->sud_sel = (t)->sud_rearm;                                                             \
        call;                                                                                      \
        (t)->sud_sel = COL_SUD_ALLOW;                                                              \
        (t)->sud_in_real = 0;                                                                      \
    } while (0)

/* col_ring.c */
void *col_ring_reserve(struct col_thread *t, uint32_t len);
static inline void col_ring_commit(struct col_thread *t, uint32_t len)
{
    struct col_ring *r = t->ring;

    r->head += len;
    atomic_store_explicit(&r->ctl->head, r->head, memory_order_release);
}

/* Stamp the hook: set the ring's pending word (marker, then the time) and
 * return the time. The event must be published, then col_stamp_done(). */
static inline __attribute__((always_inline)) uint64_t col_stamp_with(struct col_thread *t,
                                                                     int plain)
{
    struct fmt_shm_ring_ctl *c = t->ring->ctl;
    uint64_t ts;

    /* Release: a recorder that reads the marker must find the previous
     * event in head (docs/protocol.md, "Memory order"). */
    atomic_store_explicit(&c->pending, FMT_SHM_PENDING_MARKER, memory_order_release);
    ts = plain ? ms_arch_ticks() : col_now();
    atomic_store_explicit(&c->pending, ts, memory_order_release);
    return ts;
}

static inline uint64_t col_stamp(struct col_thread *t)
{
    return col_stamp_with(t, 0);
}

static inline void col_stamp_done(struct col_thread *t)
{
    atomic_store_explicit(&t->ring->ctl->pending, 0, memory_order_release);
}

/* col_hooks_alloc.c: look up the next operator new/delete, *allocx, mi_*,
 * tc_* once. */
void col_alloc_resolve(void);
int col_channel_init(void);
/* col_selfrec.c: no recorder in the environment but MEMSCRIBE_OUTPUT set:
 * start one, fill in its socket's name and the secret, and put both in
 * the environment for the program's children. 0, or -1: run untraced. */
int col_selfrec_start(char *sock_name, size_t sock_size, uint8_t secret[FMT_SHM_SECRET_BYTES]);
/* Hand a line of text to the recorder, which prints it (never our fd 2:
 * the program may have made it a data file). Dropped if nobody listens. */
void col_send_say(const char *text, size_t len);
int col_ring_claim(struct col_thread *t);
void col_ring_release(struct col_thread *t);
/* The process image is ending (exit() or _exit()): stamp segment 0's
 * exit_ts with the time, so that the recorder dates the exit then. */
void col_ring_stamp_exit(void);
int col_segments_start(uint16_t hello_kind);
void col_segments_forget(void);
void col_emit_thread(struct col_thread *t, uint8_t type, const char *name, uint32_t name_len);

/* Wait for room for need bytes in the thread's ring: 0, or -1 if the
 * recorder is gone or the stream ended meanwhile (turned off). */
int col_ring_wait(struct col_thread *t, uint64_t need);
/* After col_turn_off(), before the rings are dropped (a new attach): wait
 * until no thread waits for room and no hook is under way in a ring,
 * for 1 s at most. */
void col_ring_quiesce(void);

/* col_ring.c: col_ring_reserve_inline past r->room: wait for the
 * recorder, or a PAD first if the record would cross the ring's end. */
void *col_ring_reserve_slow(struct col_thread *t, uint32_t len);

/* Room for a record of len bytes (a PAD first if it would cross the ring
 * end), or NULL; publish it with col_ring_commit(). */
static inline __attribute__((always_inline)) void *col_ring_reserve_inline(struct col_thread *t,
                                                                           uint32_t len)
{
    struct col_ring *r = t->ring;

    if (COL_LIKELY(r->head + len <= r->room))
        return r->data + (r->head & (COL_RING_SIZE - 1));
    return col_ring_reserve_slow(t, len);
}

/* Publish one EVENT (or RELEASE) record with nargs extra words. Inlined
 * into the heap hooks (their arguments are mostly constants there: no
 * call, no stack-passed arguments); col_emit_event is the same out of
 * line. */
static inline __attribute__((always_inline)) void
col_emit_event_inline(struct col_thread *t, uint8_t type, uint8_t kind, uint8_t flags,
                      uint8_t origin, uint32_t stack, uint64_t ts, uint64_t addr, uint64_t size,
                      const uint64_t *extra, unsigned nargs)
{
    uint32_t len = FMT_SHM_EVENT_SIZE(nargs);
    struct fmt_shm_event *e = col_ring_reserve_inline(t, len);

    if (COL_UNLIKELY(!e))
        return;
    e->type = type;
    e->kind = kind;
    e->flags = flags;
    e->origin_nargs = (uint8_t)(origin | nargs << 4);
    e->stack = stack;
    e->ts_ns = ts;
    e->addr = addr;
    e->size = size;
    for (unsigned i = 0; i < nargs; i++)
        e->extra[i] = extra[i];
    col_ring_commit(t, len);
}
void col_emit_event(struct col_thread *t, uint8_t type, uint8_t kind, uint8_t flags, uint8_t origin,
                    uint32_t stack, uint64_t ts, uint64_t addr, uint64_t size,
                    const uint64_t *extra, unsigned nargs);

/* readlink(path) by the system call (no libc wrapper under a hook):
 * readlink where the CPU has it (x86), since a program's seccomp filter
 * that lets the collector run allows what it always called
 * (tests/programs/col_seccomp.c); AArch64 has only readlinkat. */
static inline long col_sys_readlink(const char *path, char *buf, long size)
{
#ifdef SYS_readlink
    return syscall(SYS_readlink, path, buf, size);
#else
    return syscall(SYS_readlinkat, (long)AT_FDCWD, path, buf, size); /* as fmt_shm_calls.h says */
#endif
}

/* col_count.c: the exact counters of a sampled recording (fmt_shm_counters.h):
 * segment 0's area, NULL before the stream starts, when not sampling, and
 * in a forked child until its own stream starts. */
extern struct fmt_shm_counters *col_counters;
struct fmt_shm_counter_slot *col_count_claim(struct col_thread *t);
/* A thread's first counted call (col_count.c): its slot claimed, then
 * counted as col_count_alloc and col_count_end_usable do. Out of line, so
 * that the inline paths make no call after the real one (no registers to
 * save across it). */
void col_count_alloc_first(struct col_thread *t, unsigned kind, void *p, uint64_t size);
void col_count_end_first(struct col_thread *t, void *p, uint64_t usable, int is_free);
void col_count_start(struct fmt_shm_header *h0);
void col_count_fork_child(void);
void col_count_threads(void);
/* The usable size of a block the real allocator gave (not NULL): glibc's
 * chunk header when the real malloc is glibc's, else its
 * malloc_usable_size. */
size_t col_count_usable_slow(void *p);
static inline size_t col_count_usable(void *p)
{
    if (COL_LIKELY(col_glibc_malloc)) {
        /* glibc 2.36's malloc_usable_size, untagged: the chunk's size less
         * its header, two words if it was mmap'd (bit 1), else one */
        size_t w = ((const size_t *)p)[-1];
        return (w & ~(size_t)7) - sizeof(size_t) - (w & 2) * (sizeof(size_t) / 2);
    }
    return col_count_usable_slow(p);
}

/* The x86-64 single-instruction adds below are plain instructions to
 * ThreadSanitizer, which sees no asm: under it the portable path, the
 * one AArch64 takes, is compiled (tests/unit/test_tsan_rings.c). */
#if defined(__SANITIZE_THREAD__)
#define COL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COL_TSAN 1
#endif
#endif
#if defined(__x86_64__) && !defined(COL_TSAN)
#define COL_COUNT_ASM 1
#endif

/* *v += d in one instruction: a signal handler's call between a load and a
 * store cannot lose one (the slot is the thread's alone). Slot 0 is
 * shared: atomic. Elsewhere than x86-64 a relaxed atomic add (LSE's
 * stadd, or an exclusive pair a signal makes retry). Relaxed: the sums
 * publish nothing. The caller reads the thread's shared flag once. */
static inline __attribute__((always_inline)) void col_count_add(int shared, uint64_t *v, uint64_t d)
{
#ifdef COL_COUNT_ASM
    if (COL_LIKELY(!shared)) {
        __asm__("addq %1, %0" : "+m"(*v) : "er"(d));
        return;
    }
#else
    (void)shared;
#endif
    __atomic_fetch_add(v, d, __ATOMIC_RELAXED);
}

/* The stream's heap in use moves by d usable bytes (a two's complement
 * negative for a free); an allocation may raise its peak. One thread:
 * an unlocked xadd (a handler between cannot lose it either) and a plain
 * store of the peak; threads: atomic. */
static inline __attribute__((always_inline)) void col_count_heap(struct fmt_shm_counters *c,
                                                                 uint64_t d, int grows)
{
    uint64_t v = d;

#ifdef COL_COUNT_ASM
    if (COL_LIKELY(!atomic_load_explicit(&c->threaded, memory_order_relaxed))) {
        __asm__("xaddq %0, %1" : "+r"(v), "+m"(*(uint64_t *)&c->heap_usable));
        v += d;
        if (grows && v > atomic_load_explicit(&c->peak_usable, memory_order_relaxed))
            atomic_store_explicit(&c->peak_usable, v, memory_order_relaxed);
        return;
    }
#endif
    v = atomic_fetch_add_explicit(&c->heap_usable, d, memory_order_relaxed) + d;
    if (!grows)
        return;
    uint64_t peak = atomic_load_explicit(&c->peak_usable, memory_order_relaxed);
    while (v > peak && !atomic_compare_exchange_weak_explicit(
                           &c->peak_usable, &peak, v, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* A call of kind (enum fmt_kind) that started block p of size requested
 * bytes (NULL: it failed, or a realloc to 0 that freed), counted. */
static inline __attribute__((always_inline)) void
col_count_alloc(struct col_thread *t, unsigned kind, void *p, uint64_t size)
{
    struct fmt_shm_counters *c = col_counters;
    struct fmt_shm_counter_slot *s;

    if (!c)
        return;
    if (COL_UNLIKELY(!(s = t->ctr))) {
        col_count_alloc_first(t, kind, p, size);
        return;
    }
    int shared = t->ctr_shared;
    uint64_t *v = s->v;
    col_count_add(shared, &v[FMT_CTR_CALLS + kind], 1);
    if (!p) {
        col_count_add(shared, &v[FMT_CTR_FAILED],
                      size != 0 || kind < FMT_EV_REALLOC || kind > FMT_EV_REALLOCARRAY);
        return;
    }
    uint64_t usable = col_count_usable(p);
    col_count_add(shared, &v[FMT_CTR_ALLOCS], 1);
    col_count_add(shared, &v[FMT_CTR_ALLOC_BYTES], size);
    col_count_add(shared, &v[FMT_CTR_ALLOC_USABLE], usable);
    /* a block given is below 2^47 bytes: its class below 48 */
    col_count_add(shared, &v[FMT_CTR_CLASS + 63 - __builtin_clzll(size | 1)], 1);
    t->last_block = (uintptr_t)p;
    t->last_size = size;
    col_count_heap(c, usable, 1);
}

/* Block p (not NULL) of usable bytes, ended by the real free or realloc,
 * counted (its usable size read before the allocator had it back). A
 * free() call counts as one (a realloc's call is its allocation's). */
static inline __attribute__((always_inline)) void
col_count_end_usable(struct col_thread *t, void *p, uint64_t usable, int is_free)
{
    struct fmt_shm_counters *c = col_counters;
    struct fmt_shm_counter_slot *s;

    if (!c)
        return;
    if (COL_UNLIKELY(!(s = t->ctr))) {
        col_count_end_first(t, p, usable, is_free);
        return;
    }
    int shared = t->ctr_shared;
    uint64_t *v = s->v;
    if (is_free)
        col_count_add(shared, &v[FMT_CTR_CALLS + FMT_EV_FREE], 1);
    col_count_add(shared, &v[FMT_CTR_FREES], 1);
    col_count_add(shared, &v[FMT_CTR_FREE_USABLE], usable);
    if (t->last_block == (uintptr_t)p) {
        col_count_add(shared, &v[FMT_CTR_TEMPORARY], 1);
        col_count_add(shared, &v[FMT_CTR_TEMPORARY_BYTES], t->last_size);
    }
    t->last_block = 0;
    col_count_heap(c, (uint64_t)0 - usable, 0);
}

/* free(p) of block p (not NULL), before the real free. */
static inline __attribute__((always_inline)) void col_count_free(struct col_thread *t, void *p)
{
    if (col_counters)
        col_count_end_usable(t, p, col_count_usable(p), 1);
}

/* A realloc-shaped call of kind after the real call: old (NULL: none) of
 * old_usable bytes (read before it), p its result for size requested
 * bytes. A failure leaves the old block as it was; realloc(old, 0) that
 * returned NULL freed it. */
static inline __attribute__((always_inline)) void col_count_realloc(struct col_thread *t,
                                                                    unsigned kind, void *old,
                                                                    uint64_t old_usable, void *p,
                                                                    uint64_t size)
{
    if (!col_counters)
        return;
    if (old && (p || !size))
        col_count_end_usable(t, old, old_usable, 0);
    col_count_alloc(t, kind, p, size);
}

/* A call of an allocator's own entry points (col_hooks_alloc.c), not
 * counted: the totals say they leave such calls out. */
static inline void col_count_uncounted(void)
{
    struct fmt_shm_counters *c = col_counters;

    if (c && !atomic_load_explicit(&c->uncounted, memory_order_relaxed))
        atomic_store_explicit(&c->uncounted, 1u, memory_order_relaxed);
}

/* free(NULL): a call, and no block. */
static inline __attribute__((always_inline)) void col_count_free_null(struct col_thread *t)
{
    struct fmt_shm_counter_slot *s;

    if (col_counters && (s = t->ctr ? t->ctr : col_count_claim(t)))
        col_count_add(t->ctr_shared, &s->v[FMT_CTR_CALLS + FMT_EV_FREE], 1);
}

/* col_sample.c: record --sample BYTES (0: every allocation, the default). */
extern uint64_t col_sample_bytes;
/* Sampling without Syscall User Dispatch: an unsampled call may skip
 * col_enter() altogether (col_sample_pass). With dispatch on, the real
 * call must run inside a hook, so that the mappings it makes are marked
 * as libc's. */
extern int col_sample_fast;
/* col_dormant || col_sample_fast, set with them: the one flag the exported
 * heap hooks test on the exact path (col_hooks_heap.c). A col_dormant set
 * without it is still honoured, by col_enter(). */
extern int col_hook_fast;
/* A bit per slot of sampled addresses (col_sample_slot): set while a live
 * sampled block hashes to the slot. 32 KiB, which a free reads, stays in
 * the cache beside the program's data; the slots' counts (col_sample.c),
 * 1 MiB, are read only by a sampled allocation or a maybe-sampled free. */
extern _Atomic uint64_t *col_sample_bits;
#define COL_SAMPLE_FILTER_BITS 18
/* The rate MEMSCRIBE_SAMPLE asks for: a whole decimal number, with K, M
 * or G after it (1024s); 0 (exact) for anything else. */
uint64_t col_sample_env_rate(void);
int col_sample_init(void);
void col_sample_reset(void);
int col_sample_take(struct col_thread *t, uint64_t s);
void col_sample_note(const void *p);
int col_sample_forget_slow(uint64_t key);

static inline uint32_t col_sample_slot(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - COL_SAMPLE_FILTER_BITS));
}

/* Sampling mode: 1 if an allocation of size bytes that returned p is
 * left out; a sampled block is added to the live set. */
static inline __attribute__((always_inline)) int col_sample_skip(struct col_thread *t, void *p,
                                                                 uint64_t size)
{
    uint64_t s = size + (size == 0);
    uint64_t left = t->sample_left; /* read once: a signal handler may allocate too */

    if (COL_LIKELY(s < left)) {
        t->sample_left = left - s;
        return 1;
    }
    if (!col_sample_take(t, s))
        return 1;
    if (p)
        col_sample_note(p);
    return 0;
}

/* The fast path of an allocation under sampling, before col_enter(): 1
 * if it is not sampled (the countdown is taken down; call the real
 * function and return), 0 to go the hook's whole way (the thread is in
 * a hook, the countdown runs out, or its first allocation). */
static inline __attribute__((always_inline)) int col_sample_pass(uint64_t size)
{
    struct col_thread *t = &col_thread;
    uint64_t s = size + (size == 0);
    uint64_t left = t->sample_left;

    if (COL_LIKELY(s < left && !t->busy)) {
        t->sample_left = left - s;
        return 1;
    }
    return 0;
}

/* 1 if p cannot be a live sampled block (its slot's bit is clear). */
static inline __attribute__((always_inline)) int col_sample_surely_not(const void *p)
{
    uint32_t slot = col_sample_slot((uint64_t)(uintptr_t)p);

    return !(
        (atomic_load_explicit(&col_sample_bits[slot >> 6], memory_order_acquire) >> (slot & 63)) &
        1);
}

/* Sampling mode: 1 if p is a live sampled block, which is then removed
 * (before the real free: the address cannot be handed out meanwhile). */
static inline __attribute__((always_inline)) int col_sample_forget(const void *p)
{
    if (COL_LIKELY(col_sample_surely_not(p)))
        return 0;
    return col_sample_forget_slow((uint64_t)(uintptr_t)p);
}

/* col_hooks_heap.c: a realloc-shaped call under sampling, in two halves
 * around the real call, made by the caller with the thread entered. The
 * old block is recorded only if it was sampled, the new one only if it
 * is sampled now (by its whole size, as any allocation): both, as an
 * exact trace has them; only the old, as a free; only the new, as a
 * realloc of NULL. */
struct col_realloc_sampled {
    int had; /* the old block was a live sampled one */
    uint32_t stack;
    uint64_t ts0;
};
void col_realloc_sampled_begin(struct col_thread *t, void *old, struct col_realloc_sampled *rs);
/* After the real call returned p for size bytes (UINT64_MAX: an overflow):
 * the events of kind with extra[0..nargs) (extra[0] is the old address,
 * zeroed here when the old block was not sampled), and col_leave(t).
 * Returns p. */
void *col_realloc_sampled_end(struct col_thread *t, const struct col_realloc_sampled *rs, void *old,
                              void *p, uint64_t size, uint8_t kind, uint64_t *extra,
                              unsigned nargs);

/* col_stack.c */
int col_stack_init(void);
void col_stack_reset(void);
uint32_t col_stack_get(struct col_thread *t);
uint32_t col_stack_finish(struct col_thread *t, void *const *buf, int n);
struct col_unwind_memo;
extern int col_unwind_fp; /* MEMSCRIBE_UNWIND=fp */
int col_fp_backtrace(void **buf, int max);
#ifndef COL_UNWIND_LIBGCC
/* col_stack_finish for a walk of col_unwind_backtrace with the ring's memo
 * m (max: the walk's): interned by the tree of frames, taking the node of
 * the frames the walk took from the last one. */
uint32_t col_stack_finish_walk(struct col_thread *t, void **buf, int n, int max,
                               struct col_unwind_memo *m);
int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo **memo);
/* The ring's memos of its last walks, the first member of its stack cache
 * (col_stack.c), if it has them with room for walks of max frames (a later
 * attach may ask for deeper stacks than the cache was made for). */
static inline struct col_unwind_memo *col_stack_memo(struct col_thread *t, int max)
{
    struct col_unwind_memo *m = (struct col_unwind_memo *)(void *)t->ring->cache;

    return m && (uint32_t)max <= m->max ? m : NULL;
}
#endif

/* The calling hook's stack, unwound from the hook's own frame: inlined
 * into each hook (with the helpers between), so the unwinder does not
 * step through frames of ours that are dropped anyway. Each step costs
 * ~6 ns with libunwind, and on a shallow stack our two extra frames were a
 * fifth of the walk. */
static inline __attribute__((always_inline)) uint32_t col_stack_here(struct col_thread *t)
{
#ifdef COL_UNWIND_LIBGCC
    return col_stack_get(t);
#else
    void *buf[FMT_SHM_MAX_DEPTH + 4];
    int max = (int)col_depth + 4;

    if (col_unwind_fp)
        return col_stack_finish(t, buf, col_fp_backtrace(buf, max));
    {
        struct col_unwind_memo *m = col_stack_memo(t, max);
        int n = col_unwind_backtrace(buf, max, &m);

        return col_stack_finish_walk(t, buf, n, max, m);
    }
#endif
}
uint32_t col_stack_intern(struct col_thread *t, const uint64_t *f, uint32_t n);
uint32_t col_stack_from_context(struct col_thread *t, void *uc);
struct col_stack_cache *col_stack_cache_new(void);
void col_stack_cache_free(struct col_stack_cache *c);

/* col_fork.c: our calls into dl_iterate_phdr (directly or through an
 * unwinder) are kept out of the moment a fork() copies the process, whose
 * child would inherit the loader's lock held. */
struct dl_phdr_info;
void col_fork_init(void);
void col_loader_enter(void);
void col_loader_leave(void);
int col_dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);

/* col_module.c */
void col_modules_rescan(struct col_thread *t);
void col_modules_poll(struct col_thread *t);
void col_modules_reset(void);
int col_self_range(uintptr_t *lo, uintptr_t *hi);

/* col_sud.c: precise capture of the mappings libc, ld.so and
 * pthread_create make, by Syscall User Dispatch (MEMSCRIBE_VM_PRECISE=1). */
extern int col_sud_on;
void col_sud_process_init(void);
void col_sud_thread_start(struct col_thread *t);

/* col_maps.c: the process's mappings when its stream starts, and the
 * collector's own mappings, which that snapshot leaves out. */
void col_maps_snapshot(struct col_thread *t);
void col_maps_note_own(const void *p, size_t len);
/* The table of the collector's own mappings, *nr pairs of (lo, hi)
 * uintptr_t, for the recorder's scan at exit (col_reach.c); *cap: its
 * entries in all, those past *nr zero. */
const void *col_maps_own_table(uint32_t *nr, uint32_t *cap);
/* col_reach.c: under MEMSCRIBE_REACH=1, ask the recorder to class the
 * image's live blocks now (the image is ending) and wait until it has,
 * bounded (docs/protocol-order.md, "Leak classes at exit"). No-op otherwise. */
extern int col_reach_on;
/* Segment 0's header when this process image has a live stream (not a
 * vfork child, not a forked child before its first event, not off), else
 * NULL. */
struct fmt_shm_header *col_ring_header0(void);
void col_reach_at_exit(void);
/* Under MEMSCRIBE_REACH=1, say where the table of our own mappings is in
 * segment 0's header h as it is made: a scan the recorder makes without
 * our asking (record -p's detach, record's SIGUSR1) leaves them out too. */
void col_reach_publish(struct fmt_shm_header *h);
void col_maps_tool_init(void);
int col_maps_tool_caller(const void *ra); /* a return address in libunwind */

/* The raw mmap syscall for offset-0 mappings: i386's SYS_mmap takes a
 * pointer to its arguments; mmap2 takes them in registers. */
#ifdef SYS_mmap2
#define COL_SYS_MMAP SYS_mmap2
#else
#define COL_SYS_MMAP SYS_mmap
#endif

/* Private anonymous memory by raw syscall, never through our own hook. */
void *col_sys_mmap(size_t len);
void col_sys_munmap(void *p, size_t len);
/* The same for a table that fills at random: huge pages from 2 MiB; and
 * fresh zero pages over one (a forked child's). */
void *col_sys_mmap_table(size_t len);
void col_sys_zero_table(void *p, size_t len);
pid_t col_gettid(void);

#endif
