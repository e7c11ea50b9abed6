/* SPDX-License-Identifier: MIT */
/* The writer's table of live blocks: an ordered hash table of packed
 * blocks with linear probing (fmt_wlive_internal.h), grown in place, in
 * memory of its own; beside it a plain one for the blocks that do not
 * pack. */
#include "format/fmt_wlive_internal.h"
#include "format/fmt_writer_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define WLIVE_MIN_BITS 10
/* Slots past the last home, for the runs that spill over: a fixed share
 * of the homes, so that doubling doubles them too (wlive_grow); the last
 * of them is slots[end]. A large table is then a whole number of 2 MiB
 * pages. */
#define WLIVE_SPILL_SHARE 16
/* Grow when more than this share of the homes holds blocks (x/256): a
 * table in a core's cache (WLIVE_SMALL_BYTES) keeps runs short, a larger
 * one saves memory (python3's JSON round trip: 64 MiB, not 128). */
#define WLIVE_MAX_LOAD_SMALL 128
#define WLIVE_MAX_LOAD 192
#define WLIVE_SMALL_BYTES ((size_t)1 << 20)

static uint64_t wlive_homes(unsigned shift)
{
    return (uint64_t)1 << (64 - shift);
}

static size_t wlive_bytes(uint64_t end)
{
    return (size_t)((((end + 1) * sizeof(struct fmt_wslot)) + 4095) & ~(uint64_t)4095);
}

/* The slots' memory. On Linux a mapping of its own, which grows by mremap:
 * pages move instead of being copied, and the table needs no second copy
 * of itself while it grows. A large table is random access over tens of
 * MB: 2 MiB pages (THP, asked for with MADV_HUGEPAGE) spare a TLB miss per
 * lookup, and the part a growth adds is faulted in at once
 * (MADV_POPULATE_WRITE, Linux 5.14; before it, the first pass of the
 * growth faults it in). On python3's JSON round trip (1.5 M live blocks)
 * the recorder took 154 ns per event with 4 KiB pages, 112-127 with these
 * (medians of 5 alternating runs each, load 3-5).
 * Elsewhere (the Windows build of the writer) the C heap. */
#ifdef __linux__
#define WLIVE_HUGE ((size_t)2 << 20)

/* A zero-filled mapping of size bytes at a multiple of WLIVE_HUGE when it
 * is that large, or NULL. */
static void *wlive_map(size_t size, int prot)
{
    size_t extra = size >= WLIVE_HUGE ? WLIVE_HUGE : 0;
    char *p = mmap(NULL, size + extra, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
    if (extra) {
        uintptr_t a = ((uintptr_t)p + WLIVE_HUGE - 1) & ~(uintptr_t)(WLIVE_HUGE - 1);
        size_t head = a - (uintptr_t)p;

        if (head)
            munmap(p, head);
        if (extra - head)
            munmap((char *)a + size, extra - head);
        p = (char *)a;
    }
    if (size >= WLIVE_HUGE)
        madvise(p, size, MADV_HUGEPAGE);
    return p;
}

static int wlive_alloc(struct fmt_wlive *l, size_t size)
{
    void *p = wlive_map(size, PROT_READ | PROT_WRITE);

    if (!p)
        return -ENOMEM;
    l->slots = p;
    l->map_size = size;
    return 0;
}

/* Make the slots' memory size bytes, keeping what it holds. */
static int wlive_realloc(struct fmt_wlive *l, size_t size)
{
    /* Where it moves: reserved, aligned for huge pages. */
    void *to = wlive_map(size, PROT_NONE);
    char *p;

    if (!to)
        return -ENOMEM;
    p = mremap(l->slots, l->map_size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to);
    if (p == MAP_FAILED) {
        munmap(to, size);
        return -ENOMEM;
    }
    if (size >= WLIVE_HUGE)
        madvise(p, size, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    madvise(p + l->map_size, size - l->map_size, MADV_POPULATE_WRITE);
#endif
    l->slots = (void *)p;
    l->map_size = size;
    return 0;
}

static void wlive_free(struct fmt_wlive *l)
{
    if (l->slots)
        munmap(l->slots, l->map_size);
}
#else
static int wlive_alloc(struct fmt_wlive *l, size_t size)
{
    if (!(l->slots = calloc(1, size)))
        return -ENOMEM;
    l->map_size = size;
    return 0;
}

static int wlive_realloc(struct fmt_wlive *l, size_t size)
{
    char *p = realloc(l->slots, size);

    if (!p)
        return -ENOMEM;
    memset(p + l->map_size, 0, size - l->map_size);
    l->slots = (void *)p;
    l->map_size = size;
    return 0;
}

static void wlive_free(struct fmt_wlive *l)
{
    free(l->slots);
}
#endif

static void wlive_limits(struct fmt_wlive *l, unsigned shift)
{
    uint64_t homes = wlive_homes(shift);

    l->shift = shift;
    l->end = homes + homes / WLIVE_SPILL_SHARE - 1;
    l->max_nr = homes / 256 *
                (homes * sizeof(struct fmt_wslot) < WLIVE_SMALL_BYTES ? WLIVE_MAX_LOAD_SMALL
                                                                      : WLIVE_MAX_LOAD);
}

int fmt_wlive_init(struct fmt_wlive *l, uint32_t time_unit_ns)
{
    memset(l, 0, sizeof(*l));
    l->tu = time_unit_ns ? time_unit_ns : 1;
    wlive_limits(l, 64 - WLIVE_MIN_BITS);
    return wlive_alloc(l, wlive_bytes(l->end));
}

void fmt_wlive_destroy(struct fmt_wlive *l)
{
    wlive_free(l);
    l->slots = NULL;
    free(l->wide.slots);
    l->wide.slots = NULL;
}

/* Double the homes in place. A block's new home is twice its old one, or
 * that plus one, so the order of hashes is the order of the new homes as
 * well. First every block at slot p moves to slot 2p (from the top down:
 * 2p is free by then); then from the bottom up each goes to its new home
 * or just past the block before it, whichever is higher, which is never
 * above the slot it is in but one (a free odd slot). */
static int wlive_grow(struct fmt_wlive *l)
{
    uint64_t old_end = l->end;
    struct fmt_wslot *s;
    int rc;

    /* Twice the slots: [0, 2 * old_end + 1) and the empty last one. */
    if (l->shift <= 1 || old_end > SIZE_MAX / sizeof(*s) / 2 - 1)
        return -ENOMEM;
    if ((rc = wlive_realloc(l, wlive_bytes(2 * old_end + 1))))
        return rc;
    wlive_limits(l, l->shift - 1);
    s = l->slots;
    for (uint64_t p = old_end; p-- > 1;) {
        if (!s[p].serial)
            continue;
        s[2 * p] = s[p];
        s[p].serial = 0;
    }
    uint64_t next = 0; /* the lowest slot the next block may take */
    for (uint64_t q = 0; q < l->end; q++) {
        if (!s[q].serial)
            continue;
        uint64_t to = fmt_wlive_hash(s[q].key) >> l->shift;

        if (to < next)
            to = next;
        if (to != q) {
            s[to] = s[q];
            s[q].serial = 0;
        }
        next = to + 1;
        if (to > q)
            q = to;
    }
    return 0;
}

int fmt_wlive_insert_grow(struct fmt_wlive *l, const struct fmt_wslot *n)
{
    /* Full enough, or the run would spill past the last slot. */
    struct fmt_wblock b;
    int rc = wlive_grow(l);

    if (rc)
        return rc;
    fmt_wlive_unpack(l, n, &b);
    return fmt_wlive_insert(l, &b);
}

/* The wide blocks: linear probing with backward-shift deletion. */
static uint64_t wide_home(const struct fmt_wlive_wide *t, uint32_t image, uint64_t addr)
{
    return (fmt_wlive_hash(addr) ^ image * 0xff51afd7ed558ccdull) >> 20 & t->mask;
}

static int64_t wide_slot(const struct fmt_wlive_wide *t, uint32_t image, uint64_t addr)
{
    if (!t->nr)
        return -1;
    for (uint64_t i = wide_home(t, image, addr); t->slots[i].serial; i = (i + 1) & t->mask)
        if (t->slots[i].addr == addr && t->slots[i].image == image)
            return (int64_t)i;
    return -1;
}

static void wide_put(struct fmt_wlive_wide *t, const struct fmt_wblock *b)
{
    uint64_t i = wide_home(t, b->image, b->addr);

    while (t->slots[i].serial)
        i = (i + 1) & t->mask;
    t->slots[i] = *b;
    t->nr++;
}

static void wide_remove(struct fmt_wlive_wide *t, uint64_t i)
{
    uint64_t hole = i;

    for (uint64_t j = (i + 1) & t->mask; t->slots[j].serial; j = (j + 1) & t->mask) {
        uint64_t home = wide_home(t, t->slots[j].image, t->slots[j].addr);

        /* j may move to hole if home is not in (hole, j] cyclically. */
        if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    t->slots[hole].serial = 0;
    t->nr--;
}

int fmt_wlive_insert_wide(struct fmt_wlive *l, const struct fmt_wblock *b)
{
    struct fmt_wlive_wide *t = &l->wide;
    struct fmt_wblock old;
    int64_t i;

    if (fmt_wlive_key_fits(b->image, b->addr))
        (void)fmt_wlive_take(l, b->image, b->addr, &old); /* a packed block there ends */
    if ((i = wide_slot(t, b->image, b->addr)) >= 0) {
        t->slots[i] = *b;
        return 0;
    }
    /* Keep the load at most 1/2. */
    if ((t->nr + 1) * 2 > t->mask + 1) {
        uint64_t cap = t->slots ? (t->mask + 1) * 2 : 64;
        struct fmt_wlive_wide n = {calloc(cap, sizeof(*n.slots)), cap - 1, 0};

        if (!n.slots)
            return -ENOMEM;
        for (uint64_t j = 0; t->slots && j <= t->mask; j++)
            if (t->slots[j].serial)
                wide_put(&n, &t->slots[j]);
        free(t->slots);
        *t = n;
    }
    wide_put(t, b);
    return 0;
}

void fmt_wlive_drop_wide(struct fmt_wlive *l, uint32_t image, uint64_t addr)
{
    int64_t i = wide_slot(&l->wide, image, addr);

    if (i >= 0)
        wide_remove(&l->wide, (uint64_t)i);
}

int fmt_wlive_take_wide(struct fmt_wlive *l, uint32_t image, uint64_t addr, struct fmt_wblock *out)
{
    int64_t i = wide_slot(&l->wide, image, addr);

    if (i < 0)
        return 0;
    *out = l->wide.slots[i];
    wide_remove(&l->wide, (uint64_t)i);
    return 1;
}

int fmt_wlive_get_wide(const struct fmt_wlive *l, uint32_t image, uint64_t addr,
                       struct fmt_wblock *out)
{
    int64_t i = wide_slot(&l->wide, image, addr);

    if (i < 0)
        return 0;
    *out = l->wide.slots[i];
    return 1;
}

int fmt_wlive_next(const struct fmt_wlive *l, uint64_t *pos, struct fmt_wblock *out)
{
    for (; *pos < l->end; ++*pos)
        if (l->slots[*pos].serial) {
            fmt_wlive_unpack(l, &l->slots[(*pos)++], out);
            return 1;
        }
    for (; l->wide.slots && *pos - l->end <= l->wide.mask; ++*pos)
        if (l->wide.slots[*pos - l->end].serial) {
            *out = l->wide.slots[(*pos)++ - l->end];
            return 1;
        }
    return 0;
}

/* A table of a few KiB stays in L1, where a prefetch costs more than it
 * saves (a malloc/free storm with one live block: 35.5 -> 39 ns per event
 * in the recorder). A larger one does not stay even in L2: the rings'
 * records stream through the recorder's caches (a storm over 4,096 live
 * blocks, a 0.5 MiB table: 67 -> 58 ns per event with the prefetches). */
#define WLIVE_PREFETCH_BYTES ((size_t)64 << 10)

int fmt_writer_prefetch_pays(const struct fmt_writer *w)
{
    return w->live.map_size > WLIVE_PREFETCH_BYTES;
}

void fmt_writer_prefetch(const struct fmt_writer *w, uint32_t image, uint64_t addr)
{
    const struct fmt_wlive *l = &w->live;

    __builtin_prefetch(&l->slots[fmt_wlive_hash(fmt_wlive_key(image, addr)) >> l->shift]);
}
