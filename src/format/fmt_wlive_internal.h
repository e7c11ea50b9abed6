/* SPDX-License-Identifier: MIT */
/* The writer's live heap blocks, keyed by (image, address): how a free or
 * realloc finds the block it ends. Memory is O(live blocks). */
#ifndef FMT_WLIVE_INTERNAL_H
#define FMT_WLIVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* A block (heap block or mapping) as the writer remembers it. */
struct fmt_wblock {
    uint64_t addr;
    uint64_t serial; /* never 0 */
    uint64_t size;
    uint64_t ts_ns;
    uint32_t stack;
    uint32_t ctx;
    uint32_t image;
    uint32_t ord; /* its index among the blocks its context started in the chunk */
};

/* A block packed into 32 bytes, two to a cache line (a struct fmt_wblock
 * takes 48): the table of a program with a million live blocks is a
 * third of the size, which is fewer pages to fault in and fewer cache
 * and TLB misses. A block with a field too wide for its bits (an
 * address of 2^48 or more, an image past 2^16, a context id or ord past
 * 2^20, a block of 4 GiB or more, a serial or a time past 2^44, a time
 * not a multiple of the unit) goes to a table of whole blocks beside it
 * (struct fmt_wlive_wide); every real trace so far fits. The time is kept
 * in time units, so a trace in the default microseconds fits for 200
 * days (in nanoseconds, for 4.8 hours). */
struct fmt_wslot {
    uint64_t key;    /* addr | image << 48 */
    uint64_t serial; /* serial | ord << 44; 0: an empty slot */
    uint64_t size;   /* size | stack << 32 */
    uint64_t time;   /* ts_ns / time unit | ctx << 44 */
};

#define FMT_WSLOT_ADDR_BITS 48
#define FMT_WSLOT_SERIAL_BITS 44 /* the time's too; ord and ctx have the other 20 */

/* The blocks that do not pack: open addressing with linear probing, whole
 * blocks. Usually empty. */
struct fmt_wlive_wide {
    struct fmt_wblock *slots; /* serial 0: empty */
    uint64_t mask;            /* capacity - 1, or 0 before the first */
    uint64_t nr;
};

/* Open addressing with linear probing, kept in order of the keys' hashes
 * (an ordered hash table: Amble and Knuth, 1974). A key's home is the top
 * bits of its hash, so doubling the table keeps that order and is done in
 * place, two passes over the slots in address order (fmt_wlive.c); a
 * probe ends at an empty slot or at a larger hash. No wrap-around: slots
 * past the last home take the runs that spill over, and slots[end] stays
 * empty, so every probe ends without a bound check. */
struct fmt_wlive {
    struct fmt_wslot *slots;
    uint64_t end;    /* slots [0, end) may hold blocks */
    uint64_t nr;     /* blocks in slots */
    uint64_t max_nr; /* the table grows beyond this many */
    unsigned shift;  /* home = hash >> shift */
    uint32_t tu;     /* the time unit, ns: times are multiples of it */
    size_t map_size; /* bytes of the slots' memory */
    struct fmt_wlive_wide wide;
};

/* An empty table for blocks whose times are multiples of time_unit_ns
 * (1 or more; others are kept too, as wide blocks). 0 or -ENOMEM. */
int fmt_wlive_init(struct fmt_wlive *l, uint32_t time_unit_ns);
void fmt_wlive_destroy(struct fmt_wlive *l);

/* The lookups run once per heap event: inline here, with the rare parts
 * out of line.
 *
 * The hash keeps neighbours together: the blocks of one aligned 128-byte
 * bucket of the heap (at most 8 of 16 bytes, 4 of glibc's smallest chunk)
 * share a home, in address order (the low 7 bits of the key), and each
 * bucket's home is the Fibonacci hash of its number (whose top bits depend
 * on every bit of it, image included). A program that frees what it
 * allocated together then finds a bucket's blocks in one or two cache
 * lines of the table instead of one line, and one TLB entry, a block: on
 * a table of tens of MB each of those is a miss, and under a VM's nested
 * paging a TLB miss costs most of a cache miss. The recorder on python3's
 * JSON round trip (1.5 M live blocks, a 68 MiB table), user ns per event,
 * medians of 5-7 alternating runs: 61.2 with a hash of the whole key, 50.0
 * with 64-byte buckets, 46.2 with 128, 46.2 with 256 and 48.7 with 1 KiB
 * buckets, which make runs long enough to cost a malloc/free storm over
 * 4,096 live blocks 56.5 against 46.5 (128: 44.5). The hash does not
 * depend on the table's size, so doubling keeps the order. */
#define FMT_WLIVE_BUCKET_BITS 7

static inline uint64_t fmt_wlive_hash(uint64_t key)
{
    const uint64_t low = ((uint64_t)1 << FMT_WLIVE_BUCKET_BITS) - 1;

    return ((key >> FMT_WLIVE_BUCKET_BITS) * 0x9e3779b97f4a7c15ull & ~low) | (key & low);
}

static inline uint64_t fmt_wlive_key(uint32_t image, uint64_t addr)
{
    return addr | (uint64_t)image << FMT_WSLOT_ADDR_BITS;
}

/* 1 if (image, addr) can be a packed slot's key. */
static inline int fmt_wlive_key_fits(uint32_t image, uint64_t addr)
{
    return !((addr >> FMT_WSLOT_ADDR_BITS) | (image >> (64 - FMT_WSLOT_ADDR_BITS)));
}

/* Pack b into *s; returns 0 if a field does not fit. */
static inline int fmt_wlive_pack(const struct fmt_wlive *l, const struct fmt_wblock *b,
                                 struct fmt_wslot *s)
{
    uint64_t addr = b->addr, serial = b->serial, size = b->size, ts = b->ts_ns;
    uint64_t image = b->image, ord = b->ord, stack = b->stack, ctx = b->ctx;
    uint64_t t = l->tu == 1000 ? ts / 1000 : l->tu == 1 ? ts : ts / l->tu;

    s->key = addr | image << FMT_WSLOT_ADDR_BITS;
    s->serial = serial | ord << FMT_WSLOT_SERIAL_BITS;
    s->size = size | stack << 32;
    s->time = t | ctx << FMT_WSLOT_SERIAL_BITS;
    return !((addr >> FMT_WSLOT_ADDR_BITS) | (image >> (64 - FMT_WSLOT_ADDR_BITS)) |
             ((serial | t) >> FMT_WSLOT_SERIAL_BITS) |
             ((ord | ctx) >> (64 - FMT_WSLOT_SERIAL_BITS)) | (size >> 32)) &&
           t * l->tu == ts && serial;
}

/* Store a slot word by word: a struct copy from the stack loads it as
 * 16-byte vectors, which stall on the 8-byte stores that just made it (a
 * third of an insert's time on a malloc/free storm, when the writer
 * copied whole blocks). The empty asm keeps the loads apart. */
static inline void fmt_wlive_store(struct fmt_wslot *d, const struct fmt_wslot *n)
{
    uint64_t key = n->key, serial = n->serial, size = n->size, time = n->time;

    __asm__("" : "+r"(key), "+r"(serial));
    __asm__("" : "+r"(size), "+r"(time));
    d->key = key;
    d->serial = serial;
    d->size = size;
    d->time = time;
}

static inline void fmt_wlive_unpack(const struct fmt_wlive *l, const struct fmt_wslot *s,
                                    struct fmt_wblock *b)
{
    const uint64_t low = ((uint64_t)1 << FMT_WSLOT_SERIAL_BITS) - 1;

    b->addr = s->key & (((uint64_t)1 << FMT_WSLOT_ADDR_BITS) - 1);
    b->image = (uint32_t)(s->key >> FMT_WSLOT_ADDR_BITS);
    b->serial = s->serial & low;
    b->ord = (uint32_t)(s->serial >> FMT_WSLOT_SERIAL_BITS);
    b->size = (uint32_t)s->size;
    b->stack = (uint32_t)(s->size >> 32);
    b->ts_ns = (s->time & low) * l->tu;
    b->ctx = (uint32_t)(s->time >> FMT_WSLOT_SERIAL_BITS);
}

/* The rare ends of insert and take: a wide block, a full table
 * (fmt_wlive.c). They take copies made on their branch only, so that the
 * fast path keeps its block and slot in registers. */
int fmt_wlive_insert_wide(struct fmt_wlive *l, const struct fmt_wblock *b);
int fmt_wlive_insert_grow(struct fmt_wlive *l, const struct fmt_wslot *n);
void fmt_wlive_drop_wide(struct fmt_wlive *l, uint32_t image, uint64_t addr);
int fmt_wlive_take_wide(struct fmt_wlive *l, uint32_t image, uint64_t addr, struct fmt_wblock *out);
int fmt_wlive_get_wide(const struct fmt_wlive *l, uint32_t image, uint64_t addr,
                       struct fmt_wblock *out);

/* Add b (b->serial != 0). A live block at the same address is replaced:
 * its free was missed, and the new block is what a later free ends.
 * Returns 0 or -ENOMEM. */
static inline __attribute__((always_inline)) int fmt_wlive_insert(struct fmt_wlive *l,
                                                                  const struct fmt_wblock *b)
{
    struct fmt_wslot n;

    if (__builtin_expect(!fmt_wlive_pack(l, b, &n), 0)) {
        struct fmt_wblock copy = *b;

        return fmt_wlive_insert_wide(l, &copy);
    }
    if (__builtin_expect(l->wide.nr != 0, 0))
        fmt_wlive_drop_wide(l, b->image, b->addr);

    uint64_t h = fmt_wlive_hash(n.key);
    uint64_t i = h >> l->shift;
    uint64_t e;
    for (;; i++) {
        const struct fmt_wslot *s = &l->slots[i];

        if (!s->serial) {
            e = i;
            break;
        }
        if (s->key == n.key) {
            fmt_wlive_store(&l->slots[i], &n);
            return 0;
        }
        if (fmt_wlive_hash(s->key) > h) {
            /* Before this block: the rest of the run moves up one slot. */
            for (e = i + 1; l->slots[e].serial; e++)
                ;
            break;
        }
    }
    if (__builtin_expect(e >= l->end || l->nr >= l->max_nr, 0)) {
        struct fmt_wslot copy = n;

        return fmt_wlive_insert_grow(l, &copy);
    }
    for (; e > i; e--) /* a slot or two: no memmove call */
        fmt_wlive_store(&l->slots[e], &l->slots[e - 1]);
    fmt_wlive_store(&l->slots[i], &n);
    l->nr++;
    return 0;
}

/* The slot of the packed block with key, or -1. */
static inline int64_t fmt_wlive_slot(const struct fmt_wlive *l, uint64_t key)
{
    uint64_t h = fmt_wlive_hash(key);

    for (uint64_t i = h >> l->shift;; i++) {
        const struct fmt_wslot *s = &l->slots[i];

        if (!s->serial)
            return -1;
        if (s->key == key)
            return (int64_t)i;
        if (fmt_wlive_hash(s->key) > h)
            return -1;
    }
}

/* Copy the live block at (image, addr) into *out. Returns 1, or 0 if none. */
static inline int fmt_wlive_get(const struct fmt_wlive *l, uint32_t image, uint64_t addr,
                                struct fmt_wblock *out)
{
    int64_t i =
        fmt_wlive_key_fits(image, addr) ? fmt_wlive_slot(l, fmt_wlive_key(image, addr)) : -1;

    if (i < 0)
        return l->wide.nr ? fmt_wlive_get_wide(l, image, addr, out) : 0;
    fmt_wlive_unpack(l, &l->slots[i], out);
    return 1;
}

/* Remove the block at (image, addr) into *out. Returns 1, or 0 if none. */
static inline __attribute__((always_inline)) int
fmt_wlive_take(struct fmt_wlive *l, uint32_t image, uint64_t addr, struct fmt_wblock *out)
{
    int64_t at =
        fmt_wlive_key_fits(image, addr) ? fmt_wlive_slot(l, fmt_wlive_key(image, addr)) : -1;

    if (__builtin_expect(at < 0, 0))
        return l->wide.nr ? fmt_wlive_take_wide(l, image, addr, out) : 0;
    fmt_wlive_unpack(l, &l->slots[at], out);
    /* Backward shift: the rest of the run moves down one slot while its
     * blocks are above their homes, so no tombstone is left behind. */
    uint64_t i = (uint64_t)at;
    for (; l->slots[i + 1].serial && (fmt_wlive_hash(l->slots[i + 1].key) >> l->shift) <= i; i++)
        l->slots[i] = l->slots[i + 1];
    l->slots[i].serial = 0;
    l->nr--;
    return 1;
}

/* The next live block from *pos (start at 0) into *out: 1, or 0 at the
 * end. In no particular order; the table must not change meanwhile. */
int fmt_wlive_next(const struct fmt_wlive *l, uint64_t *pos, struct fmt_wblock *out);

#endif
