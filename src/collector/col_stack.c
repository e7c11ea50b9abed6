/* SPDX-License-Identifier: MIT */
/* Call stacks: unwound from the program's CFI (col_unwind_x86_64.c, right through code
 * without frame pointers, NOTES.md) and interned per process so each
 * distinct stack crosses to the recorder once, as a STACK record. */
#ifdef COL_UNWIND_LIBGCC
/* The i386 collector: no 32-bit libunwind in Debian's multilib, so libgcc's
 * unwinder, linked statically (-static-libgcc): it reads .eh_frame_hdr
 * through dl_iterate_phdr and does not allocate. Slower (~2 us a stack,
 * NOTES.md), but right through code without frame pointers. */
#include <stdint.h>
#include <unwind.h>

struct col_unwind_memo;

struct col_unw_state {
    void **buf;
    int n, max;
};

static _Unwind_Reason_Code col_unw_step(struct _Unwind_Context *ctx, void *arg)
{
    struct col_unw_state *s = arg;
    uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);

    if (s->n >= s->max || !ip)
        return _URC_END_OF_STACK;
    s->buf[s->n++] = (void *)ip;
    return _URC_NO_REASON;
}

static int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo *memo)
{
    struct col_unw_state s = {buf, 0, max};

    (void)memo; /* libgcc walks the whole stack each time */
    _Unwind_Backtrace(col_unw_step, &s);
    return s.n;
}
#else
#include "collector/col_unwind_internal.h"
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"

/* A lock-free open-addressing table. key: 0 empty, 1 being filled,
 * otherwise the stack's hash with the top bit set. The frames live in an
 * append-only arena: arena[off] = frame count, then the frames. Both are
 * mmap'd with MAP_NORESERVE and touched only as they fill. */
#if UINTPTR_MAX == UINT32_MAX
/* A 32-bit program has 4 GiB in all: take 36 MiB of it, not 272. */
#define COL_TABLE_SLOTS (1u << 18)
#define COL_ARENA_WORDS (4u << 20) /* 32 MiB of address space */
#else
#define COL_TABLE_SLOTS (1u << 20)
#define COL_ARENA_WORDS (32u << 20) /* 256 MiB of address space */
#endif
#define COL_TABLE_PROBES 64
#define COL_KEY_BUSY 1ull

struct col_stack_slot {
    _Atomic uint64_t key;
    uint32_t id;
    uint32_t off;
};

struct col_stack_cache {
    struct {
        uint64_t key;
        uint32_t id;
        uint32_t off;
    } e[COL_STACK_CACHE_ENTRIES];
    /* The ring's last stack, while calls keep repeating it (a loop that
     * allocates at one site): compared frame by frame with the new one, it
     * saves hashing the frames and probing the cache. After a few misses
     * in a row it is off for a while, so that a program whose stacks
     * change at every call does not pay for keeping it. */
    uint32_t last_n, last_id;
    uint32_t last_misses; /* consecutive misses */
    uint32_t last_pause;  /* calls left with it off */
    uint64_t last[FMT_SHM_MAX_DEPTH + 4];
#ifndef COL_UNWIND_LIBGCC
    struct col_unwind_memo memo; /* the last walk (col_unwind_x86_64.c) */
#endif
};
_Static_assert(sizeof(struct col_stack_cache) <= COL_STACK_CACHE_BYTES, "COL_STACK_CACHE_BYTES");

#define COL_LAST_MISSES 8   /* misses in a row that turn the last stack off */
#define COL_LAST_PAUSE 4096 /* for this many calls */

static struct col_stack_slot *col_table;
static uint64_t *col_arena;
static _Atomic uint64_t col_arena_top;
static _Atomic uint32_t col_next_id = 1;
static uintptr_t col_self_lo, col_self_hi;

#define COL_TABLE_BYTES ((size_t)COL_TABLE_SLOTS * sizeof(struct col_stack_slot))
#define COL_ARENA_BYTES ((size_t)COL_ARENA_WORDS * 8)

/* MEMSCRIBE_UNWIND=fp: follow the frame-pointer chain instead of
 * libunwind. About ten times cheaper, and lossy (NOTES.md): code built
 * without frame pointers, like Debian's libc and libstdc++, cuts the chain
 * short or hides a caller. Every step stays inside this thread's stack, so
 * a register that is not a frame pointer cannot make us fault. */
int col_unwind_fp;
static COL_TLS uintptr_t col_fp_stack_hi;

int col_stack_init(void)
{
    void *warm[8];

    if (col_self_range(&col_self_lo, &col_self_hi) != 0)
        return -1;
    col_table = col_sys_mmap(COL_TABLE_BYTES);
    col_arena = col_sys_mmap(COL_ARENA_BYTES);
    if (!col_table || !col_arena)
        return -1;
    {
        const char *mode = getenv("MEMSCRIBE_UNWIND");

        col_unwind_fp = mode && !strcmp(mode, "fp");
#ifndef COL_UNWIND_LIBGCC
        col_unwind_verify = mode && !strcmp(mode, "verify");
        if (col_unwind_init() != 0)
            return -1;
#endif
    }
    if (!col_unwind_fp)
        col_unwind_backtrace(warm, 8, NULL);
    return 0;
}

/* In a forked child: ids restart with the child's own stream. Mapping
 * fresh zero pages over the old ones drops the parent's copy at once. */
void col_stack_reset(void)
{
    syscall(COL_SYS_MMAP, (long)col_table, (long)COL_TABLE_BYTES, (long)(PROT_READ | PROT_WRITE),
            (long)(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED), -1L, 0L);
    syscall(COL_SYS_MMAP, (long)col_arena, (long)COL_ARENA_BYTES, (long)(PROT_READ | PROT_WRITE),
            (long)(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED), -1L, 0L);
    atomic_store(&col_arena_top, 0);
    atomic_store(&col_next_id, 1);
}

struct col_stack_cache *col_stack_cache_new(void)
{
    return col_sys_mmap(COL_STACK_CACHE_BYTES);
}

#ifdef COL_UNWIND_LIBGCC
static struct col_unwind_memo *col_stack_memo(struct col_thread *t)
{
    (void)t;
    return NULL;
}
#else
struct col_unwind_memo *col_stack_memo(struct col_thread *t)
{
    return t->ring && t->ring->cache ? &t->ring->cache->memo : NULL;
}
#endif

/* Frames times distinct odd multipliers, summed: the multiplies do not
 * wait for each other (a chained xor-multiply-shift cost ~2 ns a frame on
 * deep stacks); a final mix spreads the bits. Equality is checked on the
 * frames themselves, so the hash only has to spread well. */
#define COL_HASH_M0 0xff51afd7ed558ccdull

static inline uint64_t col_hash_frame(uint64_t frame, uint64_t m)
{
    return (frame ^ (frame >> 29)) * m;
}

/* sum: the frames' terms added up, n: their count. */
static inline uint64_t col_hash_final(uint64_t sum, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull * (n + 1) + sum;

    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h | (1ull << 63);
}

static uint64_t col_stack_hash(const uint64_t *f, uint32_t n)
{
    uint64_t sum = 0, m = COL_HASH_M0;

    for (uint32_t i = 0; i < n; i++, m += 2)
        sum += col_hash_frame(f[i], m);
    return col_hash_final(sum, n);
}

/* A plain loop, not memcmp: stacks are a few to a few dozen words, and the
 * call into libc's memcmp (through the PLT) cost more than the compare on
 * every cache hit of a malloc storm. */
static inline __attribute__((always_inline)) int col_frames_equal(const uint64_t *a,
                                                                  const uint64_t *f, uint32_t n)
{
    uint64_t diff = 0;

    for (uint32_t i = 0; i < n; i++)
        diff |= a[i] ^ f[i];
    return diff == 0;
}

static inline __attribute__((always_inline)) int col_stack_equal(uint32_t off, const uint64_t *f,
                                                                 uint32_t n)
{
    return col_arena[off] == n && col_frames_equal(&col_arena[off + 1], f, n);
}

/* Publish the definition of stack id; it must be in the ring before any
 * thread can find the id in the table. */
static void col_stack_publish(struct col_thread *t, uint32_t id, const uint64_t *f, uint32_t n)
{
    uint32_t len = fmt_shm_stack_size(n);
    struct fmt_shm_stack *s = col_ring_reserve(t, len);

    if (!s)
        return;
    s->h.type = FMT_SHM_REC_STACK;
    s->h.len = len;
    s->id = id;
    s->nr_frames = n;
    memcpy(s->frames, f, n * sizeof(*f));
    col_ring_commit(t, len);
}

/* Intern frames whose hash is key; returns the id. */
static uint32_t col_stack_intern_key(struct col_thread *t, const uint64_t *f, uint32_t n,
                                     uint64_t key)
{
    struct col_stack_cache *cache = t->ring->cache;
    uint32_t ci = (uint32_t)(key ^ key >> 20) & (COL_STACK_CACHE_ENTRIES - 1);
    uint32_t slot = (uint32_t)key & (COL_TABLE_SLOTS - 1);
    uint32_t id;

    if (cache && cache->e[ci].key == key && col_stack_equal(cache->e[ci].off, f, n))
        return cache->e[ci].id;
    for (int probe = 0; probe < COL_TABLE_PROBES;) {
        struct col_stack_slot *s = &col_table[slot];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

        if (k == 0) {
            uint64_t expect = 0, off;

            if (!atomic_compare_exchange_strong(&s->key, &expect, COL_KEY_BUSY))
                continue; /* someone took it meanwhile: look at it again */
            off = atomic_fetch_add_explicit(&col_arena_top, n + 1, memory_order_relaxed);
            if (off + n + 1 > COL_ARENA_WORDS) {
                atomic_store(&s->key, 0);
                break; /* arena full: fall through to an uninterned stack */
            }
            col_arena[off] = n;
            memcpy(&col_arena[off + 1], f, n * sizeof(*f));
            id = atomic_fetch_add_explicit(&col_next_id, 1, memory_order_relaxed);
            col_stack_publish(t, id, f, n);
            s->id = id;
            s->off = (uint32_t)off;
            atomic_store_explicit(&s->key, key, memory_order_release);
            if (cache) {
                cache->e[ci].key = key;
                cache->e[ci].id = id;
                cache->e[ci].off = (uint32_t)off;
            }
            return id;
        }
        /* A busy slot is skipped: at worst the same stack gets two ids,
         * which the writer folds together. */
        if (k == key && col_stack_equal(s->off, f, n)) {
            if (cache) {
                cache->e[ci].key = key;
                cache->e[ci].id = s->id;
                cache->e[ci].off = s->off;
            }
            return s->id;
        }
        slot = (slot + 1) & (COL_TABLE_SLOTS - 1);
        probe++;
    }
    /* Table or arena full: keep working, send the stack again. */
    id = atomic_fetch_add_explicit(&col_next_id, 1, memory_order_relaxed);
    col_stack_publish(t, id, f, n);
    return id;
}

uint32_t col_stack_intern(struct col_thread *t, const uint64_t *f, uint32_t n)
{
    return col_stack_intern_key(t, f, n, col_stack_hash(f, n));
}

/* A stack unwound from a signal context (col_sud.c): it starts at the
 * interrupted instruction; our own frames (a hook between libc and the
 * program) are dropped. */
uint32_t col_stack_from_context(struct col_thread *t, void *uc)
{
#ifdef COL_UNWIND_LIBGCC
    /* libgcc steps through our restorer (its bytes are the kernel
     * convention's) from the handler to the interrupted code. */
    (void)uc;
    return col_stack_get(t);
#else
    void *buf[FMT_SHM_MAX_DEPTH + 4];
    uint32_t id = col_stack_get(t);

    /* The walk from the handler crosses our restorer by its unwind
     * information (col_sud.c); should it stop there, walk from the
     * context itself. */
    if (id)
        return id;
    return col_stack_finish(t, buf, col_unwind_from_context(uc, buf, (int)col_depth + 4));
#endif
}

int col_fp_backtrace(void **buf, int max)
{
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0), fp = lo, hi = col_fp_stack_hi;
    int n = 0;

    if (!hi) {
        pthread_attr_t attr;
        void *addr;
        size_t size;

        /* Once per thread (it may allocate: nested, so not recorded). */
        if (pthread_getattr_np(pthread_self(), &attr) != 0)
            return 0;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0)
            col_fp_stack_hi = hi = (uintptr_t)addr + size;
        pthread_attr_destroy(&attr);
        if (!hi)
            return 0;
    }
    while (n < max && fp >= lo && fp <= hi - 16 && !(fp & 7)) {
        uintptr_t next = ((const uintptr_t *)fp)[0], ret = ((const uintptr_t *)fp)[1];

        if (!ret)
            break;
        buf[n++] = (void *)ret;
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

/* Drop our own frames (the hook's, this library's helpers', and the
 * dispatch handler's (col_sud.c) when a signal arrived while it re-issued
 * a syscall, between the program's handler and the interrupted code), then
 * intern. */
uint32_t col_stack_finish(struct col_thread *t, void *const *buf, int n)
{
    struct col_stack_cache *c = t->ring->cache;
    uint64_t f[FMT_SHM_MAX_DEPTH + 4];
    uint32_t k = 0, id;

    for (int i = 0; i < n && k < col_depth; i++) {
        uint64_t ip = (uint64_t)(uintptr_t)buf[i];

        if (ip - col_self_lo >= col_self_hi - col_self_lo)
            f[k++] = ip;
    }
    if (!k)
        return 0;
    if (!c || c->last_pause) {
        if (c)
            c->last_pause--;
        return col_stack_intern_key(t, f, k, col_stack_hash(f, k));
    }
    if (k == c->last_n && col_frames_equal(c->last, f, k)) {
        c->last_misses = 0;
        return c->last_id;
    }
    id = col_stack_intern_key(t, f, k, col_stack_hash(f, k));
    if (++c->last_misses >= COL_LAST_MISSES) {
        c->last_misses = 0;
        c->last_n = 0;
        c->last_pause = COL_LAST_PAUSE;
        return id;
    }
    c->last_n = k;
    c->last_id = id;
    for (uint32_t i = 0; i < k; i++)
        c->last[i] = f[i];
    return id;
}

uint32_t col_stack_get(struct col_thread *t)
{
    void *buf[FMT_SHM_MAX_DEPTH + 4];
    int n = col_unwind_fp ? col_fp_backtrace(buf, (int)col_depth + 4)
                          : col_unwind_backtrace(buf, (int)col_depth + 4, col_stack_memo(t));

    return col_stack_finish(t, buf, n);
}
