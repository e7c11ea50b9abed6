/* SPDX-License-Identifier: MIT */
/* The live blocks a context started in the chunk (format 1.5, feature bit
 * FREE_RANKS; docs/format-events.md, "References"): a free names its own
 * context's block more than FMT_RANK_NEAR blocks back by its rank among
 * the live ones older than the last FMT_RANK_NEAR, instead of by how many
 * blocks the context started since. Where frees hit blocks at random (the
 * pool storm: one of 4,096) the distance spreads over ~13.4 bits of
 * entropy, the rank over 12.
 *
 * Blocks are numbered in start order (ord: how many blocks the context had
 * started in the chunk before it; n of them started so far). A bit per
 * ord is set when the context ends that block, with counts of ended blocks
 * by word, 512, 4,096 and 32,768 ords (struct fmt_rank), so that counting
 * and selecting over long spans need not count bits (the pool storm:
 * 4,096 blocks back on average; python3 frees blocks of its own chunk
 * 100,000 back), and a block starting costs nothing but room. Writer and reader
 * keep it alike; the arrays are kept from chunk to chunk. */
#ifndef FMT_RANK_INTERNAL_H
#define FMT_RANK_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FMT_RANK_NEAR 64 /* references this near go by distance */
/* The levels of counts above a word of dead (64 ords), each eight of the
 * one below. */
#define FMT_RANK_SB_SHIFT 9  /* 512 ords per count */
#define FMT_RANK_GB_SHIFT 12 /* 4,096 */
#define FMT_RANK_HB_SHIFT 15 /* 32,768 */

/* Bits set in x. Not __builtin_popcountll: without -mpopcnt (the x86-64
 * baseline) that is a call into libgcc of about 25 instructions. */
static inline uint32_t fmt_rank_pop(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* Counts of ended blocks, each a prefix within a group of eight of its
 * level: per word of dead, those in its 512 before it; per 512, those in
 * its 4,096 before it; per 4,096, those in its 32,768 before it; and per
 * 32,768 its own. The ended blocks below an ord are then a sum of four
 * counts and a word's bits, without a loop (fmt_rank_below); an end adds
 * one to the lanes after its own in three groups of eight. In a loop of
 * the pool storm's frees (~4,096 blocks back), counting with loops over
 * the counts between the two ords and ending took 2.5 times as long. Each
 * array has a whole number of groups and a group more, zero, so that an
 * ord of cap reads no further. */
struct fmt_rank {
    uint64_t *dead; /* a bit per ord: ended by its own context */
    uint16_t *wp;   /* per word: ended in its 512 before it (at most 448) */
    uint16_t *sp;   /* per 512: in its 4,096 before it */
    uint16_t *gp;   /* per 4,096: in its 32,768 before it */
    uint32_t *hd;   /* per 32,768: ended in it */
    uint32_t cap;   /* ords the arrays hold, a multiple of 512 */
};

/* Entries of the array of counts per 2^shift ords for cap ords. */
static inline size_t fmt_rank_nr(uint32_t cap, unsigned shift)
{
    size_t n = ((size_t)cap + (1u << shift) - 1) >> shift;

    return cap ? ((n + 7) & ~(size_t)7) + 8 : 0;
}

static inline void fmt_rank_clear(struct fmt_rank *k)
{
    if (!k->cap)
        return;
    memset(k->dead, 0, fmt_rank_nr(k->cap, 6) * sizeof(*k->dead));
    memset(k->wp, 0, fmt_rank_nr(k->cap, 6) * sizeof(*k->wp));
    memset(k->sp, 0, fmt_rank_nr(k->cap, FMT_RANK_SB_SHIFT) * sizeof(*k->sp));
    memset(k->gp, 0, fmt_rank_nr(k->cap, FMT_RANK_GB_SHIFT) * sizeof(*k->gp));
    memset(k->hd, 0, fmt_rank_nr(k->cap, FMT_RANK_HB_SHIFT) * sizeof(*k->hd));
}

static inline void fmt_rank_free(struct fmt_rank *k)
{
    free(k->dead);
    free(k->wp);
    free(k->sp);
    free(k->gp);
    free(k->hd);
    *k = (struct fmt_rank){0};
}

/* *v, an array of counts per 2^shift ords of size bytes each, from old to
 * cap ords, the new entries 0. */
static inline int fmt_rank_grow_one(void **v, size_t size, uint32_t old, uint32_t cap,
                                    unsigned shift)
{
    size_t from = fmt_rank_nr(old, shift), to = fmt_rank_nr(cap, shift);
    unsigned char *p = realloc(*v, to * size);

    if (!p)
        return -ENOMEM;
    memset(p + from * size, 0, (to - from) * size);
    *v = p;
    return 0;
}

__attribute__((noinline, cold)) static int fmt_rank_grow(struct fmt_rank *k, uint32_t ord)
{
    uint32_t cap = k->cap ? k->cap : 1u << FMT_RANK_SB_SHIFT;

    while (cap <= ord)
        cap *= 2;
    void *d = k->dead, *w = k->wp, *s = k->sp, *g = k->gp, *h = k->hd;
    int rc = fmt_rank_grow_one(&d, sizeof(*k->dead), k->cap, cap, 6);
    k->dead = d;
    rc = rc ?: fmt_rank_grow_one(&w, sizeof(*k->wp), k->cap, cap, 6);
    k->wp = w;
    rc = rc ?: fmt_rank_grow_one(&s, sizeof(*k->sp), k->cap, cap, FMT_RANK_SB_SHIFT);
    k->sp = s;
    rc = rc ?: fmt_rank_grow_one(&g, sizeof(*k->gp), k->cap, cap, FMT_RANK_GB_SHIFT);
    k->gp = g;
    rc = rc ?: fmt_rank_grow_one(&h, sizeof(*k->hd), k->cap, cap, FMT_RANK_HB_SHIFT);
    k->hd = h;
    if (!rc)
        k->cap = cap; /* else some arrays are larger than cap needs: harmless */
    return rc;
}

/* Block ord (the context's next) started: room for its bit. Returns 0 or
 * -ENOMEM. */
static inline int fmt_rank_start(struct fmt_rank *k, uint32_t ord)
{
    return ord < k->cap ? 0 : fmt_rank_grow(k, ord);
}

/* One more in the lanes after lane j of the group of eight 16-bit counts
 * at c: two words, none of whose lanes carries (they stay under 2^15). */
static inline void fmt_rank_after(uint16_t *c, uint32_t j)
{
    static const uint64_t add[8][2] = {
        {0x0001000100010000ull, 0x0001000100010001ull},
        {0x0001000100000000ull, 0x0001000100010001ull},
        {0x0001000000000000ull, 0x0001000100010001ull},
        {0, 0x0001000100010001ull},
        {0, 0x0001000100010000ull},
        {0, 0x0001000100000000ull},
        {0, 0x0001000000000000ull},
        {0, 0},
    };
    uint64_t lo, hi;

    memcpy(&lo, c, sizeof(lo));
    memcpy(&hi, c + 4, sizeof(hi));
    lo += add[j][0];
    hi += add[j][1];
    memcpy(c, &lo, sizeof(lo));
    memcpy(c + 4, &hi, sizeof(hi));
}

/* Block ord, started and live, ended by its own context. */
static inline void fmt_rank_end(struct fmt_rank *k, uint32_t ord)
{
    k->dead[ord >> 6] |= 1ull << (ord & 63);
    fmt_rank_after(k->wp + (ord >> FMT_RANK_SB_SHIFT) * 8, (ord >> 6) & 7);
    fmt_rank_after(k->sp + (ord >> FMT_RANK_GB_SHIFT) * 8, (ord >> FMT_RANK_SB_SHIFT) & 7);
    fmt_rank_after(k->gp + (ord >> FMT_RANK_HB_SHIFT) * 8, (ord >> FMT_RANK_GB_SHIFT) & 7);
    k->hd[ord >> FMT_RANK_HB_SHIFT]++;
}

/* Ended blocks among the ords below x (x <= cap) in x's 32,768. */
static inline uint32_t fmt_rank_below(const struct fmt_rank *k, uint32_t x)
{
    return fmt_rank_pop(k->dead[x >> 6] & ((1ull << (x & 63)) - 1)) + k->wp[x >> 6] +
           k->sp[x >> FMT_RANK_SB_SHIFT] + k->gp[x >> FMT_RANK_GB_SHIFT];
}

/* Live blocks among ords o..e-1 (o <= e <= cap; blocks from e on may have
 * ended): the ended ones below e less those below o, and the 32,768s
 * between (none on a span of fewer). */
static inline uint32_t fmt_rank_count(const struct fmt_rank *k, uint32_t o, uint32_t e)
{
    uint32_t dead = fmt_rank_below(k, e) - fmt_rank_below(k, o);

    for (uint32_t h = o >> FMT_RANK_HB_SHIFT; h < e >> FMT_RANK_HB_SHIFT; h++)
        dead += k->hd[h];
    return e - o - dead;
}

/* The lane of a group of eight counts c (each the ended blocks of the
 * lanes before it in the group; c[0] is 0) of unit ords each that holds
 * the live block of rank *r (0: the oldest) of the group, *r made its rank
 * in the lane. The live blocks before lane i, i * unit - c[i], grow with
 * i: the lane is how many of lanes 1..7 have no more than *r before them,
 * counted without a branch (the loops of an earlier select, lane by lane,
 * missed a branch at every level). */
static inline uint32_t fmt_rank_lane(const uint16_t *c, uint32_t unit, uint32_t *r)
{
    uint32_t j = 0;

    for (uint32_t i = 1; i < 8; i++)
        j += i * unit - c[i] <= *r;
    *r -= j * unit - c[j];
    return j;
}

/* The position of set bit j (0: the lowest) of b, which has more than j:
 * its byte by the bytes' running counts, then within the byte. */
static inline uint32_t fmt_rank_bit(uint64_t b, uint32_t j)
{
    uint64_t c = b - ((b >> 1) & 0x5555555555555555ull);
    c = (c & 0x3333333333333333ull) + ((c >> 2) & 0x3333333333333333ull);
    c = (c + (c >> 4)) & 0x0f0f0f0f0f0f0f0full;
    uint64_t run = c * 0x0101010101010101ull; /* byte i: the bits of bytes 0..i */
    /* the high bit of each byte whose running count exceeds j (they are at most 64) */
    uint64_t over =
        ((run | 0x8080808080808080ull) - (j + 1) * 0x0101010101010101ull) & 0x8080808080808080ull;
    uint32_t i = (uint32_t)__builtin_ctzll(over) >> 3;
    uint32_t k = j - (i ? (uint32_t)(run >> (8 * i - 8)) & 0xff : 0);
    uint32_t byte = (uint32_t)(b >> (8 * i)) & 0xff;
    /* then its nibble, and the bit by a table of the set bits' positions
     * per nibble, two bits each: a loop clearing k bits missed a branch
     * on most selects */
    static const uint8_t at[16] = {0x00, 0x00, 0x01, 0x04, 0x02, 0x08, 0x09, 0x24,
                                   0x03, 0x0c, 0x0d, 0x34, 0x0e, 0x38, 0x39, 0xe4};
    uint32_t lo = (uint32_t)(0x4332322132212110ull >> (4 * (byte & 15))) & 15;
    uint32_t up = k >= lo;
    k -= up * lo;
    uint32_t nib = (byte >> (4 * up)) & 15;
    return 8 * i + 4 * up + ((at[nib] >> (2 * k)) & 3);
}

/* The ord of the live block of rank r (0: the newest) among n started, or
 * -1 if fewer are live. The 32,768 that holds it, down from n's (where
 * frees pick blocks at random most ranks are in the newest two), then as
 * a rank from the oldest of that 32,768, R, a lane of eight at each level
 * below (fmt_rank_lane), then the bit. The counts there take in ords from
 * n on too, live or ended, but the block of rank R is under n, so the
 * search stops before them. */
static inline int64_t fmt_rank_select(const struct fmt_rank *k, uint32_t r, uint32_t n)
{
    uint32_t h = n >> FMT_RANK_HB_SHIFT;
    uint32_t live = (n & ((1u << FMT_RANK_HB_SHIFT) - 1)) - fmt_rank_below(k, n);

    while (r >= live) {
        if (!h)
            return -1;
        r -= live;
        live = (1u << FMT_RANK_HB_SHIFT) - k->hd[--h];
    }
    uint32_t R = live - 1 - r;
    uint32_t g = h * 8 + fmt_rank_lane(k->gp + h * 8, 1u << FMT_RANK_GB_SHIFT, &R);
    uint32_t s = g * 8 + fmt_rank_lane(k->sp + g * 8, 1u << FMT_RANK_SB_SHIFT, &R);
    uint32_t w = s * 8 + fmt_rank_lane(k->wp + s * 8, 64, &R);
    return (int64_t)w * 64 + fmt_rank_bit(~k->dead[w], R);
}

#endif
