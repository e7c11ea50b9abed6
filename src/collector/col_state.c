/* SPDX-License-Identifier: MIT */
/* The collector's life: lazy initialisation, the per-process stream (fresh
 * after fork), each thread's first event, and turning itself off. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"

struct col_real col_real;
COL_TLS struct col_thread col_thread;
struct col_process *col_proc;
_Atomic int col_state;
uint32_t col_depth = FMT_SHM_DEFAULT_DEPTH;
int col_no_follow;
int col_dormant;
int col_free_stacks;
int col_hook_plain;
int col_free_slow = 1;

void col_hook_update(void)
{
    col_hook_plain = !col_sud_on && col_clock_fast;
    col_free_slow = !col_hook_plain || col_sample_bytes || col_free_stacks || !col_glibc_malloc;
}
int col_glibc_malloc;
int col_clock_tsc;

/* Generations count process streams; kept outside the wiped page so a
 * forked child continues the count and never reuses its parent's value. */
static uint32_t col_gen_counter;
static int col_started_once;
static pthread_key_t col_exit_key;

pid_t col_gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* Private anonymous zero pages (at addr, replacing what is there, when
 * MAP_FIXED is in flags): the mapping, or NULL. */
static void *col_sys_map(void *addr, size_t len, long flags)
{
    long p = syscall(COL_SYS_MMAP, (long)addr, (long)len, (long)(PROT_READ | PROT_WRITE),
                     (long)(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE) | flags, -1L, 0L);

    return p < 0 && p > -4096 ? NULL : (void *)p;
}

void *col_sys_mmap(size_t len)
{
    void *p = col_sys_map(NULL, len, 0);

    if (p)
        col_maps_note_own(p, len); /* not the program's: the snapshot skips it */
    return p;
}

/* A table a hash fills at random touches every page of it early, a page
 * fault each, and a fault costs 13 us on some virtual machines against
 * 0.4 us a 4 KiB page when huge pages back it (bench/notes/collector.md,
 * "Huge pages for the stack tables"): tables of 2 MiB or more ask for huge
 * pages, aligned to 2 MiB, without which the kernel gives none. Where
 * there are none (THP off) they are 4 KiB pages as before. Also for fresh
 * zero pages over such a table (MAP_FIXED: the old mapping's advice goes
 * with it). */
#define COL_HUGE (2ul << 20)

static void col_advise_huge(void *p, size_t len)
{
    if (len >= COL_HUGE && !((uintptr_t)p & (COL_HUGE - 1)))
        madvise(p, len, MADV_HUGEPAGE);
}

void *col_sys_mmap_table(size_t len)
{
    char *p, *al;

    if (len < COL_HUGE)
        return col_sys_mmap(len);
    /* COL_HUGE more than len, then the ends cut so that len bytes at a
     * multiple of COL_HUGE are left (the tail is never empty). */
    if (!(p = col_sys_map(NULL, len + COL_HUGE, 0)))
        return col_sys_mmap(len); /* short of address space: no alignment */
    al = (char *)(((uintptr_t)p + COL_HUGE - 1) & ~(uintptr_t)(COL_HUGE - 1));
    if (al > p)
        col_sys_munmap(p, (size_t)(al - p));
    col_sys_munmap(al + len, COL_HUGE - (size_t)(al - p));
    col_advise_huge(al, len);
    col_maps_note_own(al, len);
    return al;
}

void col_sys_zero_table(void *p, size_t len)
{
    if (p && col_sys_map(p, len, MAP_FIXED))
        col_advise_huge(p, len);
}

void col_sys_munmap(void *p, size_t len)
{
    if (p)
        syscall(SYS_munmap, (long)p, (long)len);
}

/* One line for the recorder to print (col_send_say): no stdio, no
 * allocation, and nothing on the program's own descriptors. */
void col_say(const char *msg, int err)
{
    char buf[FMT_SHM_SAY_MAX];
    size_t n = 0;
    const char *parts[3] = {msg, err ? ": " : "", err ? strerrorname_np(err) : ""};

    for (int i = 0; i < 3; i++)
        for (const char *s = parts[i]; s && *s && n < sizeof(buf); s++)
            buf[n++] = *s;
    col_send_say(buf, n);
}

void col_turn_off(const char *why, int err)
{
    int expect = atomic_load(&col_state);

    if (expect == COL_OFF)
        return;
    atomic_store(&col_state, COL_OFF);
    /* Every thread drops to the slow path, which reads col_state. */
    if (col_proc)
        __atomic_store_n(&col_proc->gen, UINT32_MAX, __ATOMIC_RELAXED);
    if (why)
        col_say(why, err);
}

#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        *(void **)&col_real.name = dlsym(COL_RTLD_NEXT, #name);                                    \
    } while (0)

static void col_resolve(void)
{
    RESOLVE(malloc);
    RESOLVE(calloc);
    RESOLVE(realloc);
    RESOLVE(reallocarray);
    RESOLVE(free);
    RESOLVE(memalign);
    RESOLVE(posix_memalign);
    RESOLVE(aligned_alloc);
    RESOLVE(valloc);
    RESOLVE(pvalloc);
    RESOLVE(malloc_usable_size);
    RESOLVE(mmap);
    RESOLVE(mmap64);
    RESOLVE(munmap);
    RESOLVE(mremap);
    RESOLVE(mprotect);
    RESOLVE(brk);
    RESOLVE(sbrk);
    RESOLVE(dlopen);
    RESOLVE(dlclose);
    RESOLVE(pthread_setname_np);
    RESOLVE(_exit);
    col_alloc_resolve(); /* other allocators' entry points (col_hooks_alloc.c) */
    col_sys_resolve();
}

/* --no-follow: take our own path out of LD_PRELOAD, in place (no
 * allocation), so images this process execs are not traced. The recorder
 * puts the collector first in the list, either as loaded or as
 * ".../$PLATFORM/libmemscribe.so" (ld.so fills in the platform). */
void col_strip_preload(void)
{
    char *v = getenv("LD_PRELOAD");
    Dl_info info;
    size_t len;

    if (!v || !dladdr((void *)col_strip_preload, &info) || !info.dli_fname)
        return;
    len = strlen(info.dli_fname);
    if (strncmp(v, info.dli_fname, len) != 0 || (v[len] && v[len] != ':' && v[len] != ' ')) {
        static const char tail[] = "/$PLATFORM/libmemscribe.so";

        len = strcspn(v, ": ");
        if (len < sizeof(tail) - 1 || strncmp(v + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1))
            return;
    }
    if (v[len])
        len++;
    memmove(v, v + len, strlen(v + len) + 1);
}

/* valgrind starts its client with an auxiliary vector without
 * AT_PLATFORM, where ld.so cannot put the platform in for the recorder's
 * ".../$PLATFORM/libmemscribe.so" and refuses it aloud: valgrind's
 * launcher passes the name on expanded (in place: it only gets shorter). */
static void col_expand_platform(void)
{
    extern char *program_invocation_short_name;
    const char *plat = (const char *)getauxval(AT_PLATFORM);
    char *v = getenv("LD_PRELOAD"), *p;
    size_t len;

    if (!v || !plat || strncmp(program_invocation_short_name, "valgrind", 8) ||
        !(p = strstr(v, "$PLATFORM")) || (len = strlen(plat)) > 9)
        return;
    memcpy(p, plat, len);
    memmove(p + len, p + 9, strlen(p + 9) + 1);
}

static void col_thread_exit(void *arg)
{
    struct col_thread *t = &col_thread;

    (void)arg;
    if (t->busy || !t->ring || !col_proc || t->gen != col_proc->gen)
        return;
    t->busy = 1;
    col_ring_release(t);
    t->busy = 0;
}

/* The recorder's settings (the environment; in the attach build the
 * block memscribe_attach_start() was handed, col_attach.c). */
static void col_read_settings(void)
{
    const char *s;

    s = getenv(FMT_SHM_ENV_DEPTH);
    if (s && *s) {
        long d = strtol(s, NULL, 10);
        col_depth = d < 1 ? 1 : d > FMT_SHM_MAX_DEPTH ? FMT_SHM_MAX_DEPTH : (uint32_t)d;
    }
    s = getenv(FMT_SHM_ENV_NO_FOLLOW);
    col_no_follow = s && *s == '1';
    if (col_no_follow)
        col_strip_preload();
    s = getenv(FMT_SHM_ENV_CLOCK);
    col_clock_tsc = s && !strcmp(s, "tsc");
    col_clock_settings();
    s = getenv("MEMSCRIBE_FREE_STACKS");
    col_free_stacks = s && *s == '1';
    s = getenv(FMT_SHM_ENV_REACH);
    col_reach_on = s && *s == '1';
}

/* Runs once per process image, with this thread's busy flag set so that
 * whatever dlsym or libunwind allocate passes straight through. */
void col_init(void)
{
    int expect = COL_UNINIT;

    if (!atomic_compare_exchange_strong(&col_state, &expect, COL_INITIALISING)) {
        while (atomic_load(&col_state) == COL_INITIALISING)
            sched_yield();
        return;
    }
    col_resolve();
    /* The main thread's heap and tcache now, before the program runs: the
     * first malloc sets them up under the arena lock, and with --vm-precise
     * its brk traps and is recorded meanwhile, a window long enough for a
     * timer signal whose handler mallocs to deadlock on that lock (the
     * snapshot at stream start shows the heap). */
    if (col_real.malloc && col_real.free)
        col_real.free(col_real.malloc(1));
    {
        Dl_info info;
        const char *base;

        if (col_real.malloc && dladdr(*(void **)&col_real.malloc, &info) && info.dli_fname) {
            base = strrchr(info.dli_fname, '/');
            base = base ? base + 1 : info.dli_fname;
            col_glibc_malloc = !strncmp(base, "libc.so", 7);
        }
    }
    col_expand_platform();
    if (!col_only_wanted()) {
        /* record --only: not this image. Dormant, with the environment
         * left as it is, so its children and exec'd images still load us. */
        col_dormant = 1;
        col_hook_fast = 1;
        atomic_store(&col_state, COL_OFF);
        return;
    }
    if (col_channel_init() != 0) {
        /* Preloaded without a recorder (or without its secret). */
        atomic_store(&col_state, COL_OFF);
        return;
    }
    col_read_settings();
    if (col_sample_init() != 0) {
        col_say("cannot set up the sampled-block set; not tracing", ENOMEM);
        atomic_store(&col_state, COL_OFF);
        return;
    }

    col_proc = col_sys_mmap(4096);
    if (!col_proc || madvise(col_proc, 4096, MADV_WIPEONFORK) != 0) {
        col_say("cannot set up the process page; not tracing", errno);
        atomic_store(&col_state, COL_OFF);
        return;
    }
    if (col_stack_init() != 0 || pthread_key_create(&col_exit_key, col_thread_exit) != 0) {
        col_say("cannot set up stack tables; not tracing", ENOMEM);
        atomic_store(&col_state, COL_OFF);
        return;
    }
    col_fork_init();
    col_maps_tool_init();
    col_sud_process_init();
    col_sample_fast = col_sample_bytes && !col_sud_on;
    col_hook_fast = col_sample_fast;
    col_hook_update();
    atomic_store(&col_state, COL_READY);
}

/* Start this process's stream: the first time, or in a forked child whose
 * wiped page reads zero. Called with the process lock. */
static int col_process_start(void)
{
    uint16_t kind = FMT_SHM_HELLO_IMAGE;

    if (col_started_once) {
        /* A forked child: the parent's rings, stacks and modules are not ours. */
        if (col_no_follow)
            return -1;
        col_segments_forget();
        col_stack_reset();
        col_modules_reset();
        col_sample_reset();
        kind = FMT_SHM_HELLO_FORK;
    }
    col_started_once = 1;
    col_proc->pid = getpid();
    if (col_segments_start(kind) != 0)
        return -1;
    __atomic_store_n(&col_proc->gen, ++col_gen_counter, __ATOMIC_RELEASE);
    return 0;
}

static _Atomic int *col_proc_lock(void)
{
    /* The lock lives in the wiped page: a child never inherits it held. */
    return (_Atomic int *)((char *)col_proc + 2048);
}

static __attribute__((noinline)) struct col_thread *col_enter_start(struct col_thread *t)
{
    int started_here = 0;

    if (atomic_load(&col_state) != COL_READY) {
        col_init();
        if (atomic_load(&col_state) != COL_READY)
            return NULL;
    }
    /* Before anything is stamped: may this thread read the TSC? */
    if (COL_UNLIKELY(!t->clock_known))
        col_clock_thread(t);
    if (__atomic_load_n(&col_proc->gen, __ATOMIC_ACQUIRE) == 0) {
        _Atomic int *lock = col_proc_lock();
        int rc = 0;

        while (atomic_exchange_explicit(lock, 1, memory_order_acquire))
            sched_yield();
        if (col_proc->gen == 0) {
            rc = col_process_start();
            started_here = rc == 0;
        }
        atomic_store_explicit(lock, 0, memory_order_release);
        if (rc != 0) {
            if (col_no_follow && col_started_once)
                atomic_store(&col_state, COL_OFF); /* --no-follow: forked children stay quiet */
            else
                col_turn_off("cannot set up its rings or reach the recorder; not tracing", errno);
            return NULL;
        }
    }
    if (col_proc->gen == UINT32_MAX)
        return NULL;
    if (t->gen != col_proc->gen || !t->ring) {
        t->ring = NULL;
        t->gen = col_proc->gen;
        t->tid = col_gettid();
        if (col_ring_claim(t) != 0) {
            t->ring = NULL;
            return NULL;
        }
        pthread_setspecific(col_exit_key, (void *)1);
        {
            char name[16] = {0};

            prctl(PR_GET_NAME, name);
            col_emit_thread(t, FMT_SHM_REC_THREAD_START, name, (uint32_t)strnlen(name, 16));
        }
        if (started_here) {
            col_modules_rescan(t);
            col_maps_snapshot(t);
        }
        col_sud_thread_start(t);
    }
    return t->ring ? t : NULL;
}

#ifdef COL_ATTACH
/* record -p again after a detach (col_attach.c): the library is still
 * loaded and off; a new recorder, a fresh stream announced as an image. */
int col_attach_restart(void)
{
    /* The sampled-block tables and the hooks' fast path were set up for
     * the first rate; another one would be labelled wrongly. */
    if (col_sample_env_rate() != col_sample_bytes)
        return -ENOTSUP;
    /* A hook that was under way when the last recording ended (a thread
     * waiting for room from a recorder that was killed) still holds its
     * ring: let it leave first. */
    col_ring_quiesce();
    if (col_channel_init() != 0)
        return -EIO;
    col_read_settings();
    col_hook_update();
    col_segments_forget();
    col_stack_reset();
    col_modules_reset();
    col_sample_reset();
    col_started_once = 0;
    __atomic_store_n(&col_proc->gen, 0, __ATOMIC_SEQ_CST);
    atomic_store(&col_state, COL_READY);
    return 0;
}
#endif

/* Kept apart from col_enter_start so that an image that is off (dormant
 * under record --only, or turned off) pays a load and a branch per hooked
 * call, not the big function's prologue: 23 instructions less a call. */
struct col_thread *col_enter_slow(struct col_thread *t)
{
    if (COL_UNLIKELY(atomic_load_explicit(&col_state, memory_order_relaxed) == COL_OFF))
        return NULL;
    return col_enter_start(t);
}

/* Start at load time too, so a process that never allocates is still seen;
 * the hooks start lazily if another constructor allocates before this. */
__attribute__((constructor)) static void col_constructor(void)
{
#ifndef COL_ATTACH /* record -p: memscribe_attach_start() starts us */
    struct col_thread *t = col_enter();

    if (t)
        col_leave(t);
#endif
}
