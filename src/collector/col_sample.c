/* SPDX-License-Identifier: MIT */
/* Sampling (record --sample BYTES, docs/record.md): which allocations are
 * recorded, and the set of the sampled blocks still live, so that exactly
 * their frees are recorded.
 *
 * Each byte allocated is a sampling point with probability 1/BYTES
 * (Bernoulli per byte): a thread counts down a geometric number of bytes
 * (mean BYTES) and records the allocation that reaches zero. A block of s
 * bytes is then sampled with probability 1 - (1 - 1/BYTES)^s whatever came
 * before (the geometric law has no memory), which the analysis inverts
 * into the block's weight; BYTES = 1 samples every block. malloc(0)
 * counts as one byte.
 *
 * The set lives in memory of ours (mmap'd, never the program's heap):
 * shards of open-addressed tables under spin locks, and in front of them
 * a bit per slot of an address hash that a free reads without a lock:
 * clear means the block was not sampled, which is the answer for nearly
 * every free. Behind the bits, each slot's count of live sampled blocks;
 * every key of a slot goes to one shard, so its count and its bit change
 * together under that shard's lock. (A free read a table of 1 MiB of
 * counts before: a cache miss on nearly every free, 5 % of a python
 * program's CPU at --sample 512K.) A block is added after the real
 * allocation returned it and removed before the real free releases it, so
 * one address is never in two operations at once. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "collector/col_internal.h"

uint64_t col_sample_bytes;
int col_sample_fast;
int col_hook_fast;
_Atomic uint64_t *col_sample_bits;
static uint32_t *col_sample_counts; /* per slot, under the slot's shard's lock */
static double col_sample_logq;      /* log(1 - 1/BYTES) */
static uint64_t col_sample_seed;
static int col_sample_seeded; /* MEMSCRIBE_SAMPLE_SEED given */
static _Atomic uint64_t col_sample_threads;

#define COL_SAMPLE_SHARDS 64
#define COL_SAMPLE_BITS_SIZE (((size_t)1 << COL_SAMPLE_FILTER_BITS) / 8)
#define COL_SAMPLE_MIN_CAP 64
#define COL_SAMPLE_EMPTY 0u
#define COL_SAMPLE_TOMB 1u /* no block lives at address 1 */

struct col_sample_shard {
    _Atomic int lock;
    uint32_t cap;  /* slots, a power of 2 (0: no table yet) */
    uint32_t used; /* live keys and tombstones */
    uint32_t live;
    uint64_t *keys;
    char pad[64 - 24];
};
static struct col_sample_shard *col_sample_shards;

static uint64_t col_sample_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* xorshift64*: the thread's own generator, never 0. */
static uint64_t col_sample_next(struct col_thread *t)
{
    uint64_t x = t->sample_rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->sample_rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Natural logarithms without libm: linking it would map ~900 KiB more into
 * every traced program (record_aslimit counts that) and load a library the
 * program may not use. ln(1 + y) = 2 atanh(y / (2 + y)), whose series in
 * z = y / (2 + y) converges fast for |y| <= sqrt(2) - 1 (|z| <= 0.172: ten
 * terms leave under 1e-15). */
static double col_ln1p_small(double y)
{
    double z = y / (2.0 + y), z2 = z * z, term = z, sum = 0.0;

    for (int k = 1; k <= 21; k += 2) {
        sum += term / k;
        term *= z2;
    }
    return 2.0 * sum;
}

/* ln(x) for a normal x > 0: x = m * 2^e with m in [sqrt(1/2), sqrt(2)). */
static double col_ln(double x)
{
    union {
        double d;
        uint64_t u;
    } v = {.d = x};
    int e = (int)((v.u >> 52) & 0x7ff) - 1023;

    v.u = (v.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    if (v.d > 1.4142135623730951) {
        v.d *= 0.5;
        e++;
    }
    return e * 0.6931471805599453 + col_ln1p_small(v.d - 1.0);
}

/* Bytes up to and including the next sampling point: geometric, >= 1. */
static uint64_t col_sample_draw(struct col_thread *t)
{
    /* u in (0, 1]: log(u) is finite. */
    double u = (double)((col_sample_next(t) >> 11) + 1) * 0x1p-53;
    double g;

    if (col_sample_bytes == 1)
        return 1;
    g = col_ln(u) / col_sample_logq; /* >= 0: its floor is its integer part */
    return g >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)g + 1;
}

int col_sample_take(struct col_thread *t, uint64_t s)
{
    if (COL_UNLIKELY(!t->sample_rng)) {
        /* A thread's first allocation: seed its generator (fixed by
         * MEMSCRIBE_SAMPLE_SEED, then by the order threads start) and
         * draw its first countdown. */
        uint64_t n = atomic_fetch_add(&col_sample_threads, 1) + 1;
        uint64_t seed =
            col_sample_seeded ? col_sample_seed : col_now() ^ (uint64_t)col_gettid() << 32;

        t->sample_rng = col_sample_mix(seed + n * 0x9e3779b97f4a7c15ull) | 1;
        t->sample_left = col_sample_draw(t);
        if (s < t->sample_left) {
            t->sample_left -= s;
            return 0;
        }
    }
    t->sample_left = col_sample_draw(t);
    return 1;
}

static void col_sample_lock(struct col_sample_shard *sh)
{
    unsigned spins = 0;

    while (atomic_exchange_explicit(&sh->lock, 1, memory_order_acquire)) {
        while (atomic_load_explicit(&sh->lock, memory_order_relaxed)) {
            if (++spins % 256 == 0)
                sched_yield(); /* the holder may be preempted on a busy machine */
            else
                ms_arch_relax();
        }
    }
}

static void col_sample_unlock(struct col_sample_shard *sh)
{
    atomic_store_explicit(&sh->lock, 0, memory_order_release);
}

static void col_sample_put(uint64_t *keys, uint32_t cap, uint64_t key)
{
    uint32_t i = (uint32_t)(col_sample_mix(key) & (cap - 1));

    while (keys[i] > COL_SAMPLE_TOMB)
        i = (i + 1) & (cap - 1);
    keys[i] = key;
}

/* Room for one more key: a table of at least four slots per live key,
 * without tombstones. 0, or -1 (out of memory: the block is not added). */
static int col_sample_room(struct col_sample_shard *sh)
{
    uint32_t cap = COL_SAMPLE_MIN_CAP;
    uint64_t *keys;

    if (sh->cap && (sh->used + 1) * 4 <= sh->cap * 3)
        return 0;
    while (cap < (sh->live + 1) * 4)
        cap *= 2;
    keys = col_sys_mmap((size_t)cap * sizeof(*keys));
    if (!keys)
        return -1;
    for (uint32_t i = 0; i < sh->cap; i++)
        if (sh->keys[i] > COL_SAMPLE_TOMB)
            col_sample_put(keys, cap, sh->keys[i]);
    col_sys_munmap(sh->keys, (size_t)sh->cap * sizeof(*keys));
    sh->keys = keys;
    sh->cap = cap;
    sh->used = sh->live;
    return 0;
}

/* The shard of a key: its slot's, so that one lock covers a slot. */
static struct col_sample_shard *col_sample_shard_of(uint64_t key)
{
    return &col_sample_shards[col_sample_slot(key) & (COL_SAMPLE_SHARDS - 1)];
}

void col_sample_note(const void *p)
{
    uint64_t key = (uint64_t)(uintptr_t)p;
    struct col_sample_shard *sh = col_sample_shard_of(key);

    col_sample_lock(sh);
    if (col_sample_room(sh) == 0) {
        col_sample_put(sh->keys, sh->cap, key);
        sh->used++;
        sh->live++;
        /* After the key is in: a free that sees the bit finds it. */
        uint32_t slot = col_sample_slot(key);
        if (col_sample_counts[slot]++ == 0)
            atomic_fetch_or_explicit(&col_sample_bits[slot >> 6], 1ull << (slot & 63),
                                     memory_order_release);
    }
    col_sample_unlock(sh);
}

int col_sample_forget_slow(uint64_t key)
{
    struct col_sample_shard *sh = col_sample_shard_of(key);
    int found = 0;

    col_sample_lock(sh);
    if (sh->cap) {
        uint32_t i = (uint32_t)(col_sample_mix(key) & (sh->cap - 1));

        while (sh->keys[i] != COL_SAMPLE_EMPTY) {
            if (sh->keys[i] == key) {
                sh->keys[i] = COL_SAMPLE_TOMB;
                sh->live--;
                found = 1;
                uint32_t slot = col_sample_slot(key);
                if (--col_sample_counts[slot] == 0)
                    atomic_fetch_and_explicit(&col_sample_bits[slot >> 6], ~(1ull << (slot & 63)),
                                              memory_order_relaxed);
                break;
            }
            i = (i + 1) & (sh->cap - 1);
        }
    }
    col_sample_unlock(sh);
    return found;
}

uint64_t col_sample_env_rate(void)
{
    const char *s = getenv(FMT_SHM_ENV_SAMPLE);
    uint64_t rate;
    char *end;

    if (!s || !*s)
        return 0;
    rate = strtoull(s, &end, 10);
    /* K, M, G: as record --sample's sizes (util_size.h), for a program
     * started without the wrapper */
    char unit = (char)(*end | 0x20); /* either case */
    unsigned shift = unit == 'k' ? 10 : unit == 'm' ? 20 : unit == 'g' ? 30 : 0;
    if (shift && !end[1] && end != s)
        return rate > UINT64_MAX >> shift ? 0 : rate << shift;
    return *end ? 0 : rate;
}

int col_sample_init(void)
{
    uint64_t rate = col_sample_env_rate();
    const char *s;

    if (!rate)
        return 0;
    /* log(1 - 1/rate); rate 1 never gets here (col_sample_draw) */
    col_sample_logq =
        rate > 2 ? col_ln1p_small(-1.0 / (double)rate) : col_ln(1.0 - 1.0 / (double)rate);
    s = getenv("MEMSCRIBE_SAMPLE_SEED");
    if (s && *s) {
        col_sample_seed = strtoull(s, NULL, 0);
        col_sample_seeded = 1;
    }
    col_sample_bits = col_sys_mmap(COL_SAMPLE_BITS_SIZE);
    col_sample_counts = col_sys_mmap(sizeof(*col_sample_counts) << COL_SAMPLE_FILTER_BITS);
    col_sample_shards = col_sys_mmap(sizeof(*col_sample_shards) * COL_SAMPLE_SHARDS);
    if (!col_sample_bits || !col_sample_counts || !col_sample_shards)
        return -1;
    col_sample_bytes = rate; /* sampling is on from here, with its tables */
    return 0;
}

/* A forked child starts a stream of its own: the blocks it inherited are
 * not in it, and a lock another thread held at the fork is free again. */
void col_sample_reset(void)
{
    if (!col_sample_bytes)
        return;
    for (unsigned i = 0; i < COL_SAMPLE_SHARDS; i++) {
        struct col_sample_shard *sh = &col_sample_shards[i];

        col_sys_munmap(sh->keys, (size_t)sh->cap * sizeof(*sh->keys));
        memset(sh, 0, sizeof(*sh));
    }
    madvise(col_sample_bits, COL_SAMPLE_BITS_SIZE, MADV_DONTNEED);
    madvise(col_sample_counts, sizeof(*col_sample_counts) << COL_SAMPLE_FILTER_BITS, MADV_DONTNEED);
    atomic_store(&col_sample_threads, 0);
}
