/* SPDX-License-Identifier: MIT */
/* Call stacks: unwound from the program's CFI (col_unwind.c, right through code
 * without frame pointers) and interned per process so each
 * distinct stack crosses to the recorder once, as a STACK record. */
#ifdef COL_UNWIND_LIBGCC
/* The i386 collector: no 32-bit libunwind in Debian's multilib, so libgcc's
 * unwinder, linked statically (-static-libgcc): it reads .eh_frame_hdr
 * through dl_iterate_phdr and does not allocate. Slower (~2 us a stack,
 * measured here), but right through code without frame pointers. */
#include <stdint.h>
#include <unwind.h>

#include "collector/col_internal.h"

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

static int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo **memo)
{
    struct col_unw_state s = {buf, 0, max};

    (void)memo;         /* libgcc walks the whole stack each time */
    col_loader_enter(); /* its FDE search is a dl_iterate_phdr (col_fork.c) */
    _Unwind_Backtrace(col_unw_step, &s);
    col_loader_leave();
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
 * append-only arena: arena[off] = frame count, then the frames. Both grow
 * on demand (a program under RLIMIT_AS keeps its address space): the
 * table in tiers, each four times the last, mapped when the newest is
 * three quarters full (lookups probe every tier, inserts go to the
 * newest); the arena in chunks, each twice the last, at fixed offsets
 * (chunk k holds words [first * (2^k - 1), first * (2^(k+1) - 1))). All
 * mmap'd with MAP_NORESERVE and touched only as they fill; from 2 MiB up
 * under huge pages (col_sys_mmap_table), the first tier included: a hash
 * touches every page of a tier with a program's first few hundred stacks. */
#if UINTPTR_MAX == UINT32_MAX
/* A 32-bit program has 4 GiB in all: at most 21 MiB of it, not 36. */
#define COL_TABLE_FIRST (1u << 14)
#define COL_ARENA_FIRST (8u << 10) /* words: 64 KiB, then 128 KiB, ... */
#else
#define COL_TABLE_FIRST (1u << 17)  /* slots: 2 MiB, then 8 and 32 */
#define COL_ARENA_FIRST (32u << 10) /* words: 256 KiB, then 512 KiB, ... */
#endif
#define COL_TABLE_TIERS 3
#define COL_ARENA_CHUNKS 10 /* 256 MiB in all (32 MiB on i386) */
#define COL_TABLE_PROBES 64
#define COL_KEY_BUSY 1ull

struct col_stack_slot {
    _Atomic uint64_t key;
    uint32_t id;
    uint32_t off;
};

/* A stack's (key: its hash, top bit set; its id and arena offset), or a
 * tree node's (key: its ip; id: its parent; off: its id). */
struct col_cache_entry {
    uint64_t key;
    uint32_t id;
    uint32_t off;
};

struct col_stack_cache {
#ifndef COL_UNWIND_LIBGCC
    /* The last walks (col_unwind.c): first, for col_stack_memo. */
    struct col_unwind_memo memo[COL_UNWIND_MEMOS];
#endif
    struct col_cache_entry e[COL_STACK_CACHE_ENTRIES];
    /* The ring's last stack, while calls keep repeating it (a loop that
     * allocates at one site): compared frame by frame with the new one, it
     * saves hashing the frames and probing the cache. After a few misses
     * in a row it is off for a while, so that a program whose stacks
     * change at every call does not pay for keeping it. */
    uint32_t last_n, last_id;
    uint32_t last_misses; /* consecutive misses */
    uint32_t last_pause;  /* calls left with it off */
    uint64_t last[FMT_SHM_MAX_DEPTH + 4];
    size_t bytes; /* of its mapping */
};
#ifndef COL_UNWIND_LIBGCC
_Static_assert(sizeof(struct col_stack_cache) % 8 == 0, "the memo's arrays after it");
#endif

#define COL_LAST_MISSES 8   /* misses in a row that turn the last stack off */
#define COL_LAST_PAUSE 4096 /* for this many calls */

static struct col_stack_slot *_Atomic col_tables[COL_TABLE_TIERS];
static _Atomic uint32_t col_table_used[COL_TABLE_TIERS];
static _Atomic int col_table_newest;
static uint64_t *_Atomic col_arena_chunks[COL_ARENA_CHUNKS];
static _Atomic uint64_t col_arena_top;
static _Atomic uint32_t col_next_id = 1;
static uintptr_t col_self_lo, col_self_hi;

/* The tree of stacks a walk with a memo interns into: a node is a frame
 * of the program with the node of the frames outside it (its parent, 0 at
 * the outermost), found by (parent, ip) in a lock-free table of the same
 * tiers as the stack table. Its id is its slot's index over the tiers,
 * plus 1. A walk that takes its outer frames from the last walk takes
 * their node too (col_unwind_frame.node), so interning costs a probe per
 * new frame, not a hash and a compare of the whole stack. A node's stack
 * id is given once, when a walk first ends at it. */
struct col_node_slot {
    _Atomic uint64_t ip; /* 0 empty, COL_KEY_BUSY being filled */
    uint32_t parent;
    _Atomic uint32_t stack; /* 0 none yet, COL_NODE_STACK_BUSY being published */
};
_Static_assert(sizeof(struct col_node_slot) == sizeof(struct col_stack_slot), "col_node_slot");

#define COL_NODE_ID 0x00ffffffu /* a memo's node: the id, and the depth above */
#define COL_NODE_DEPTH_SHIFT 24
#define COL_NODE_STACK_BUSY UINT32_MAX

static struct col_node_slot *_Atomic col_nodes[COL_TABLE_TIERS];
static _Atomic uint32_t col_nodes_used[COL_TABLE_TIERS];
static _Atomic int col_nodes_newest;

static inline uint32_t col_table_slots(int tier)
{
    return COL_TABLE_FIRST << (2 * tier);
}

static inline size_t col_table_bytes(int tier)
{
    return (size_t)col_table_slots(tier) * sizeof(struct col_stack_slot);
}

static inline uint32_t col_arena_chunk_of(uint64_t off)
{
    return 63u - (uint32_t)__builtin_clzll(off / COL_ARENA_FIRST + 1);
}

static inline uint64_t col_arena_base(uint32_t k)
{
    return (uint64_t)COL_ARENA_FIRST * ((1ull << k) - 1);
}

static inline size_t col_arena_bytes(uint32_t k)
{
    return ((size_t)COL_ARENA_FIRST << k) * 8;
}

/* The word at off of a stack found in the table: its chunk was mapped
 * before the stack was written, and the slot's key published both. */
static inline uint64_t *col_arena_at(uint64_t off)
{
    uint32_t k = col_arena_chunk_of(off);

    return atomic_load_explicit(&col_arena_chunks[k], memory_order_relaxed) +
           (off - col_arena_base(k));
}

/* Map a table tier or an arena chunk once; the loser of a race unmaps its
 * copy. Returns it, or NULL when the address space is short. */
static void *col_map_once(void *_Atomic *where, size_t bytes)
{
    void *have = atomic_load_explicit(where, memory_order_acquire), *mine;

    if (have)
        return have;
    mine = col_sys_mmap_table(bytes);
    if (!mine)
        return NULL;
    if (atomic_compare_exchange_strong(where, &have, mine))
        return mine;
    col_sys_munmap(mine, bytes);
    return have;
}

/* Room for words words in one chunk of the arena: their offset, or -1. */
static int64_t col_arena_reserve(uint32_t words)
{
    uint64_t top = atomic_load_explicit(&col_arena_top, memory_order_relaxed);

    for (;;) {
        uint64_t off = top;
        uint32_t k = col_arena_chunk_of(off);

        if (k >= COL_ARENA_CHUNKS)
            return -1;
        if (off + words > col_arena_base(k + 1)) { /* the rest of chunk k is left empty */
            k++;
            off = col_arena_base(k);
            if (k >= COL_ARENA_CHUNKS || words > (uint64_t)COL_ARENA_FIRST << k)
                return -1;
        }
        if (atomic_compare_exchange_weak_explicit(&col_arena_top, &top, off + words,
                                                  memory_order_relaxed, memory_order_relaxed))
            return col_map_once((void *_Atomic *)&col_arena_chunks[k], col_arena_bytes(k))
                       ? (int64_t)off
                       : -1;
    }
}

/* MEMSCRIBE_UNWIND=fp: follow the frame-pointer chain instead of
 * libunwind. About ten times cheaper, and lossy: code built
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
    if (!col_map_once((void *_Atomic *)&col_tables[0], col_table_bytes(0)) ||
        !col_map_once((void *_Atomic *)&col_nodes[0], col_table_bytes(0)) ||
        !col_map_once((void *_Atomic *)&col_arena_chunks[0], col_arena_bytes(0)))
        return -1;
    {
        const char *mode = getenv("MEMSCRIBE_UNWIND");

        col_unwind_fp = mode && !strcmp(mode, "fp");
#ifndef COL_UNWIND_LIBGCC
        col_unwind_verify = mode && !strcmp(mode, "verify");
        if (col_unwind_verify)
            col_unwind_verify_init();
        if (col_unwind_init() != 0)
            return -1;
#endif
    }
    if (!col_unwind_fp)
        col_unwind_backtrace(warm, 8, NULL);
    return 0;
}

/* In a forked child: ids restart with the child's own stream, in fresh
 * zero pages (the parent's copy goes at once). */
void col_stack_reset(void)
{
    for (int i = 0; i < COL_TABLE_TIERS; i++) {
        col_sys_zero_table(atomic_load(&col_tables[i]), col_table_bytes(i));
        col_sys_zero_table(atomic_load(&col_nodes[i]), col_table_bytes(i));
        atomic_store(&col_table_used[i], 0);
        atomic_store(&col_nodes_used[i], 0);
    }
    for (uint32_t k = 0; k < COL_ARENA_CHUNKS; k++)
        col_sys_zero_table(atomic_load(&col_arena_chunks[k]), col_arena_bytes(k));
    atomic_store(&col_nodes_newest, 0);
    atomic_store(&col_table_newest, 0);
    atomic_store(&col_arena_top, 0);
    atomic_store(&col_next_id, 1);
}

/* The bytes of a stack cache whose memo has room for walks of max
 * frames: the struct, then the memo's arrays. */
static size_t col_stack_cache_bytes(uint32_t max)
{
    size_t bytes = sizeof(struct col_stack_cache);

#ifndef COL_UNWIND_LIBGCC
    bytes += col_unwind_memos_bytes(max);
#else
    (void)max;
#endif
    return bytes;
}

struct col_stack_cache *col_stack_cache_new(void)
{
    /* Sized for this process's walks: under RLIMIT_AS every page counts
     * (tests/e2e/record_aslimit.sh). */
    uint32_t max = col_depth + 4;
    struct col_stack_cache *c = col_sys_mmap(col_stack_cache_bytes(max));

    if (!c)
        return NULL;
#ifndef COL_UNWIND_LIBGCC
    col_unwind_memos_init(c->memo, c + 1, max);
#endif
    c->bytes = col_stack_cache_bytes(max);
    return c;
}

void col_stack_cache_free(struct col_stack_cache *c)
{
    if (c)
        col_sys_munmap(c, c->bytes);
}

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
    const uint64_t *a = col_arena_at(off);

    return a[0] == n && col_frames_equal(a + 1, f, n);
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

static inline void col_cache_put(struct col_stack_cache *cache, uint32_t ci, uint64_t key,
                                 uint32_t id, uint32_t off)
{
    if (cache) {
        cache->e[ci].key = key;
        cache->e[ci].id = id;
        cache->e[ci].off = off;
    }
}

/* The tier an insert goes to: newest, or when newest is three quarters
 * full or had no room on the key's probe path (has_empty 0), the next
 * one, mapped here. */
static int col_tier_grow(void *_Atomic *tiers, _Atomic uint32_t *used, _Atomic int *newest_p,
                         int newest, int has_empty)
{
    int expect = newest;

    if ((has_empty && atomic_fetch_add(&used[newest], 1) < col_table_slots(newest) / 4 * 3) ||
        newest + 1 >= COL_TABLE_TIERS ||
        !col_map_once(&tiers[newest + 1], col_table_bytes(newest + 1)))
        return newest;
    atomic_compare_exchange_strong(newest_p, &expect, newest + 1);
    return newest + 1;
}

/* Look for the stack in one tier. Returns its slot, or NULL; *empty gets
 * the first empty slot on its probe path (NULL if none). */
static struct col_stack_slot *col_table_find(int tier, const uint64_t *f, uint32_t n, uint64_t key,
                                             struct col_stack_slot **empty)
{
    struct col_stack_slot *tab = atomic_load_explicit(&col_tables[tier], memory_order_acquire);
    uint32_t mask = col_table_slots(tier) - 1, slot = (uint32_t)key & mask;

    *empty = NULL;
    for (int probe = 0; probe < COL_TABLE_PROBES; probe++, slot = (slot + 1) & mask) {
        struct col_stack_slot *s = &tab[slot];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

        if (k == 0) {
            *empty = s;
            return NULL;
        }
        /* A busy slot is skipped: at worst the same stack gets two ids,
         * which the writer folds together. */
        if (k == key && col_stack_equal(s->off, f, n))
            return s;
    }
    return NULL;
}

/* Intern frames whose hash is key; returns the id. */
static uint32_t col_stack_intern_key(struct col_thread *t, const uint64_t *f, uint32_t n,
                                     uint64_t key)
{
    struct col_stack_cache *cache = t->ring->cache;
    uint32_t ci = (uint32_t)(key ^ key >> 20) & (COL_STACK_CACHE_ENTRIES - 1);
    int newest = atomic_load_explicit(&col_table_newest, memory_order_acquire);
    struct col_stack_slot *s = NULL, *empty = NULL, *e;
    uint32_t id;

    if (cache && cache->e[ci].key == key && col_stack_equal(cache->e[ci].off, f, n))
        return cache->e[ci].id;
    for (int tier = newest; tier >= 0 && !s; tier--)
        s = col_table_find(tier, f, n, key, tier == newest ? &empty : &e);
    if (s) {
        col_cache_put(cache, ci, key, s->id, s->off);
        return s->id;
    }
    if (col_tier_grow((void *_Atomic *)col_tables, col_table_used, &col_table_newest, newest,
                      empty != NULL) != newest)
        col_table_find(newest + 1, f, n, key, &empty);
    if (empty) {
        uint64_t expect = 0;
        int64_t off;

        /* Lost to another thread: send the stack as uninterned. */
        if (atomic_compare_exchange_strong(&empty->key, &expect, COL_KEY_BUSY)) {
            off = col_arena_reserve(n + 1);
            if (off < 0) {
                atomic_store(&empty->key, 0); /* arena full or no room to grow */
            } else {
                uint64_t *a = col_arena_at((uint64_t)off);

                a[0] = n;
                memcpy(a + 1, f, n * sizeof(*f));
                id = atomic_fetch_add_explicit(&col_next_id, 1, memory_order_relaxed);
                col_stack_publish(t, id, f, n);
                empty->id = id;
                empty->off = (uint32_t)off;
                atomic_store_explicit(&empty->key, key, memory_order_release);
                col_cache_put(cache, ci, key, id, (uint32_t)off);
                return id;
            }
        }
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

#ifndef COL_UNWIND_LIBGCC
/* Ids before tier's: COL_TABLE_FIRST * (1 + 4 + ...). */
static inline uint32_t col_node_base(int tier)
{
    return COL_TABLE_FIRST * (((1u << (2 * tier)) - 1) / 3);
}

/* The same, and a tier's slots less one, as constants a walk's probe loads. */
_Static_assert(COL_TABLE_TIERS == 3, "col_tier_*");
static const uint32_t col_tier_base[COL_TABLE_TIERS] = {0, COL_TABLE_FIRST, 5 * COL_TABLE_FIRST};
static const uint32_t col_tier_mask[COL_TABLE_TIERS] = {
    COL_TABLE_FIRST - 1, 4 * COL_TABLE_FIRST - 1, 16 * COL_TABLE_FIRST - 1};

/* Two nodes' keys are the same only if the xor of their ips is the xor
 * of their parents: not a pattern of code addresses and node ids, and a
 * probe compares both anyway. */
static inline uint64_t col_node_hash(uint32_t parent, uint64_t ip)
{
    return (ip ^ parent) * 0x9e3779b97f4a7c15ull;
}

/* The top bits of the multiply: the ones every bit of the key reaches
 * (bits 32..47 left the nodes of a program's stacks in runs: 1.8 slots
 * from home on average in a table half full). */
static inline uint32_t col_node_shift(int tier)
{
    return 64u - (uint32_t)__builtin_ctz(col_table_slots(tier));
}

static inline uint32_t col_node_home(uint64_t h, int tier)
{
    return (uint32_t)(h >> col_node_shift(tier));
}

static inline struct col_node_slot *col_node_at(uint32_t id)
{
    uint32_t i = id - 1;
    int tier = 0;

    while (tier + 1 < COL_TABLE_TIERS && i >= col_node_base(tier + 1))
        tier++;
    return atomic_load_explicit(&col_nodes[tier], memory_order_acquire) + (i - col_node_base(tier));
}

/* Look for (parent, ip) in one tier. Returns its id, or 0; *empty gets the
 * first empty slot on its probe path (NULL if none). */
static uint32_t col_node_find(int tier, uint32_t parent, uint64_t ip, uint64_t h,
                              struct col_node_slot **empty)
{
    struct col_node_slot *tab = atomic_load_explicit(&col_nodes[tier], memory_order_acquire);
    uint32_t mask = col_table_slots(tier) - 1, slot = col_node_home(h, tier);

    *empty = NULL;
    for (int probe = 0; probe < COL_TABLE_PROBES; probe++, slot = (slot + 1) & mask) {
        uint64_t k = atomic_load_explicit(&tab[slot].ip, memory_order_acquire);

        if (k == 0) {
            *empty = &tab[slot];
            return 0;
        }
        if (k == ip && tab[slot].parent == parent)
            return col_node_base(tier) + slot + 1;
    }
    return 0;
}

/* The node of frame ip inside parent (0: none), made if new. Returns its
 * id, or 0 when the table is full or another thread took the slot. */
static __attribute__((noinline)) uint32_t col_node_child(uint32_t parent, uint64_t ip)
{
    uint64_t h = col_node_hash(parent, ip), expect = 0;
    int newest = atomic_load_explicit(&col_nodes_newest, memory_order_acquire), tier;
    struct col_node_slot *empty = NULL, *e;
    uint32_t id = 0;

    for (tier = newest; tier >= 0 && !id; tier--)
        id = col_node_find(tier, parent, ip, h, tier == newest ? &empty : &e);
    if (id)
        return id;
    tier = col_tier_grow((void *_Atomic *)col_nodes, col_nodes_used, &col_nodes_newest, newest,
                         empty != NULL);
    if (tier != newest && (id = col_node_find(tier, parent, ip, h, &empty)) != 0)
        return id;
    if (!empty || !atomic_compare_exchange_strong(&empty->ip, &expect, COL_KEY_BUSY))
        return 0;
    empty->parent = parent;
    atomic_store_explicit(&empty->ip, ip, memory_order_release);
    return col_node_base(tier) +
           (uint32_t)(empty - atomic_load_explicit(&col_nodes[tier], memory_order_relaxed)) + 1;
}

/* The frames of a memo's node (id and depth), innermost first, into f;
 * returns their number. */
static uint32_t col_node_frames(uint32_t node, uint64_t *f)
{
    uint32_t n = node >> COL_NODE_DEPTH_SHIFT, at = node & COL_NODE_ID;

    for (uint32_t i = 0; i < n; i++) {
        const struct col_node_slot *a = col_node_at(at);

        f[i] = atomic_load_explicit(&a->ip, memory_order_relaxed);
        at = a->parent;
    }
    return n;
}

/* The stack id of a memo's node (id and depth), given and published when
 * a walk first ends at it. Should another thread be publishing it, this
 * one sends it too, under a second id (the writer folds the two). */
static uint32_t col_node_stack(struct col_thread *t, uint32_t node)
{
    struct col_node_slot *s = col_node_at(node & COL_NODE_ID);
    uint32_t id = atomic_load_explicit(&s->stack, memory_order_acquire), expect = 0;
    uint64_t f[FMT_SHM_MAX_DEPTH];
    uint32_t n;
    int mine;

    if (COL_LIKELY(id && id != COL_NODE_STACK_BUSY))
        return id;
    n = col_node_frames(node, f);
    mine = !id && atomic_compare_exchange_strong(&s->stack, &expect, COL_NODE_STACK_BUSY);
    id = atomic_fetch_add_explicit(&col_next_id, 1, memory_order_relaxed);
    col_stack_publish(t, id, f, n);
    if (mine)
        atomic_store_explicit(&s->stack, id, memory_order_release);
    return id;
}

#endif

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

#ifndef COL_UNWIND_LIBGCC
/* A walk's probes of the tree: its newest tier, the depth limit, our own
 * code's range (frames of ours are left out), the ring's cache. */
struct col_node_probe {
    struct col_node_slot *tab; /* the newest tier */
    uint32_t mask, shift;
    uint32_t id0;   /* the node of its slot 0, one frame deeper than depth 0 */
    uint32_t limit; /* the first node that is too deep to have a child */
    uint64_t self_lo, self_len;
    struct col_cache_entry *cache;
};

#define COL_NODE_NONE UINT32_MAX /* no node: intern by hash (no id is 0xffffff) */
#define COL_NODE_PROBES_INLINE 4
_Static_assert(COL_TABLE_FIRST * 21 < COL_NODE_ID, "node ids");

/* The node of frame ip inside node (a memo's: id and depth), made if new;
 * node itself for a frame of ours; COL_NODE_NONE past the depth limit
 * (checked: it may be) or when the table is full. */
static inline __attribute__((always_inline)) uint32_t
col_node_next(const struct col_node_probe *p, uint32_t node, uint64_t ip, int checked)
{
    uint32_t parent = node & COL_NODE_ID, slot, id;
    struct col_cache_entry *ce;
    uint64_t h, k;

    if (ip - p->self_lo < p->self_len)
        return node;
    if (checked && node >= p->limit)
        return COL_NODE_NONE;
    /* Inline: the first probe of the newest tier (most nodes of a table
     * that has not grown), then the ring's cache of the nodes it found
     * past the first probe (a table that grew holds them in every tier,
     * each three quarters full: a probe of one slot finds about half),
     * then a few more probes (in the same cache line mostly); the rest out
     * of line. A stack's key has the top bit set, an ip never: the two
     * kinds of entries share the cache without mistaking each other. */
    h = col_node_hash(parent, ip);
    slot = (uint32_t)(h >> p->shift);
    k = atomic_load_explicit(&p->tab[slot].ip, memory_order_acquire);
    if (COL_LIKELY(k == ip && p->tab[slot].parent == parent))
        return (node & ~COL_NODE_ID) + p->id0 + slot;
    ce = &p->cache[(uint32_t)(h >> 32) & (COL_STACK_CACHE_ENTRIES - 1)];
    if (ce->key == ip && ce->id == parent)
        return ((node & ~COL_NODE_ID) + (1u << COL_NODE_DEPTH_SHIFT)) | ce->off;
    id = 0;
    for (int probe = 1; k && probe < COL_NODE_PROBES_INLINE; probe++) {
        slot = (slot + 1) & p->mask;
        k = atomic_load_explicit(&p->tab[slot].ip, memory_order_acquire);
        if (k == ip && p->tab[slot].parent == parent) {
            id = p->id0 - (1u << COL_NODE_DEPTH_SHIFT) + slot;
            break;
        }
    }
    if (!id && !(id = col_node_child(parent, ip)))
        return COL_NODE_NONE;
    ce->key = ip;
    ce->id = parent;
    ce->off = id;
    return ((node & ~COL_NODE_ID) + (1u << COL_NODE_DEPTH_SHIFT)) | id;
}
#endif

#ifndef COL_UNWIND_LIBGCC
/* The nodes of the walk's own frames s[0..nr), from the outermost in,
 * inside node; checked: a frame may be past the depth limit. Returns the
 * innermost frame's node, or COL_NODE_NONE. */
static inline __attribute__((always_inline)) uint32_t col_node_fresh(const struct col_node_probe *p,
                                                                     uint32_t node,
                                                                     struct col_unwind_fresh *s,
                                                                     uint32_t nr, int checked)
{
    for (struct col_unwind_fresh *e = s + nr; e-- > s;) {
        node = col_node_next(p, node, e->ip, checked);
        if (node == COL_NODE_NONE)
            break;
        e->node = node;
    }
    return node;
}

/* MEMSCRIBE_UNWIND=verify: the tree's stack against the walk's frames,
 * filtered as col_stack_finish does. */
static __attribute__((noinline)) void col_node_verify(uint32_t node, void *const *buf, int n)
{
    uint64_t a[FMT_SHM_MAX_DEPTH], b[FMT_SHM_MAX_DEPTH + 4];
    int kb = 0;

    for (int i = 0; i < n && kb < (int)col_depth; i++)
        if ((uint64_t)(uintptr_t)buf[i] - col_self_lo >= col_self_hi - col_self_lo)
            b[kb++] = (uint64_t)(uintptr_t)buf[i];
    col_unwind_check_same("the stack interned differs from the walk", "interned:", a,
                          (int)col_node_frames(node, a), "walk:    ", b, kb);
}

uint32_t col_stack_finish_walk(struct col_thread *t, void **buf, int n, int max,
                               struct col_unwind_memo *m)
{
    /* Acquire: the tier's table pointer was stored before newest. */
    int newest = atomic_load_explicit(&col_nodes_newest, memory_order_acquire), k;
    uint32_t limit = col_depth < 255 ? col_depth : 255, node = 0, base = COL_NODE_NONE;
    struct col_node_probe p = {atomic_load_explicit(&col_nodes[newest], memory_order_acquire),
                               col_tier_mask[newest],
                               col_node_shift(newest),
                               col_tier_base[newest] + 1 + (1u << COL_NODE_DEPTH_SHIFT),
                               limit << COL_NODE_DEPTH_SHIFT,
                               col_self_lo,
                               col_self_hi - col_self_lo,
                               NULL};
    struct col_unwind_frame *f;

    if (!m || n <= 0)
        return col_stack_finish(t, buf, n);
    /* Cut at max: the nodes it took would stand for a stack cut there. */
    if (n >= max)
        goto by_hash;
    f = m->f + 1;
    /* The whole stack the last walk's, or one it had the node of: the
     * innermost frame's node is the stack's. */
    if (!m->nr_s && (node = f[m->n - 1].node) && !col_unwind_verify)
        goto stack_id;
    p.cache = t->ring->cache->e;
    /* The frames the walk took have their node, unless the walk that gave
     * them had to intern by hash; its own frames have none yet. */
    node = 0;
    for (k = (int)m->n - 1; k >= (int)m->base; k--) {
        if (f[k].node) {
            node = f[k].node;
            break;
        }
    }
    for (k++; k < (int)m->n; k++) {
        if ((node = col_node_next(&p, node, f[k].ip, 1)) == COL_NODE_NONE)
            goto by_hash;
        f[k].node = node;
    }
    /* No frame can be past the limit when there are fewer. */
    node = (uint32_t)n > limit ? col_node_fresh(&p, node, m->s, m->nr_s, 1)
                               : col_node_fresh(&p, node, m->s, m->nr_s, 0);
    if (node == COL_NODE_NONE)
        goto by_hash;
    if (COL_UNLIKELY(col_unwind_verify))
        col_node_verify(node, buf, n);
    if (!node)
        return 0;
stack_id:
    /* The stack id of a node of the newest tier, at once. */
    base = p.id0 - (1u << COL_NODE_DEPTH_SHIFT);
    if ((node & COL_NODE_ID) - base <= p.mask) {
        uint32_t id =
            atomic_load_explicit(&p.tab[(node & COL_NODE_ID) - base].stack, memory_order_acquire);

        if (COL_LIKELY(id && id != COL_NODE_STACK_BUSY))
            return id;
    }
    return col_node_stack(t, node);
by_hash:
    col_unwind_memo_frames(m, buf, n);
    return col_stack_finish(t, buf, n);
}
#endif

uint32_t col_stack_get(struct col_thread *t)
{
#ifdef COL_UNWIND_LIBGCC
    void *buf[FMT_SHM_MAX_DEPTH + 4];
    int max = (int)col_depth + 4;

    return col_stack_finish(
        t, buf, col_unwind_fp ? col_fp_backtrace(buf, max) : col_unwind_backtrace(buf, max, NULL));
#else
    return col_stack_here(t); /* the hooks' walk, out of line */
#endif
}
