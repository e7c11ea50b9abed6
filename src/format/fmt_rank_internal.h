/* SPDX-License-Identifier: MIT */
/* The live blocks a context started in the chunk (format 1.5, feature bit
 * FREE_RANKS; docs/format.md, "References"): a free names its own
 * context's block more than FMT_RANK_NEAR blocks back by its rank among
 * the live ones older than the last FMT_RANK_NEAR, instead of by how many
 * blocks the context started since. Where frees hit blocks at random (the
 * pool storm: one of 4,096) the distance spreads over ~13.4 bits of
 * entropy, the rank over 12.
 *
 * Blocks are numbered in start order (ord: how many blocks the context had
 * started in the chunk before it; n of them started so far). A bit per
 * ord is set when the context ends that block, with counts of set bits per
 * 64, per 512, per 4,096 and per 65,536, so that counting and selecting
 * over long spans step by them without counting bits (the pool storm:
 * 4,096 blocks back on average; python3 frees blocks of its own chunk
 * 100,000 back), and a block starting costs nothing but room. Writer and reader
 * keep it alike; the arrays are kept from chunk to chunk. */
#ifndef FMT_RANK_INTERNAL_H
#define FMT_RANK_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FMT_RANK_SB_SHIFT 9 /* 512 ords per count */
#define FMT_RANK_NEAR 64    /* references this near go by distance */
#define FMT_RANK_SB_WORDS (1u << (FMT_RANK_SB_SHIFT - 6))
#define FMT_RANK_GB_SHIFT 12 /* 4,096 ords per count of the counts */
#define FMT_RANK_GB_SBS (1u << (FMT_RANK_GB_SHIFT - FMT_RANK_SB_SHIFT))
#define FMT_RANK_HB_SHIFT 16 /* 65,536 ords per count of those */
#define FMT_RANK_HB_SBS (1u << (FMT_RANK_HB_SHIFT - FMT_RANK_SB_SHIFT))

/* Bits set in x. Not __builtin_popcountll: without -mpopcnt (the x86-64
 * baseline) that is a call into libgcc of about 25 instructions. */
static inline uint32_t fmt_rank_pop(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

struct fmt_rank {
    uint64_t *dead; /* a bit per ord: ended by its own context */
    uint8_t *wd;    /* set bits per word of dead */
    uint32_t *sd;   /* set bits per 512 ords */
    uint32_t *gd;   /* set bits per 4,096 ords */
    uint32_t *hd;   /* set bits per 65,536 ords */
    uint32_t cap;   /* ords the arrays hold, a multiple of 512 */
};

/* Counts per 2^shift ords for cap ords. */
static inline size_t fmt_rank_nr(uint32_t cap, unsigned shift)
{
    return ((size_t)cap + (1u << shift) - 1) >> shift;
}

static inline void fmt_rank_clear(struct fmt_rank *k)
{
    if (k->cap) {
        memset(k->dead, 0, (size_t)k->cap / 8);
        memset(k->wd, 0, (size_t)k->cap / 64);
        memset(k->sd, 0, (size_t)(k->cap >> FMT_RANK_SB_SHIFT) * sizeof(*k->sd));
        memset(k->gd, 0, fmt_rank_nr(k->cap, FMT_RANK_GB_SHIFT) * sizeof(*k->gd));
        memset(k->hd, 0, fmt_rank_nr(k->cap, FMT_RANK_HB_SHIFT) * sizeof(*k->hd));
    }
}

static inline void fmt_rank_free(struct fmt_rank *k)
{
    free(k->dead);
    free(k->wd);
    free(k->sd);
    free(k->gd);
    free(k->hd);
    *k = (struct fmt_rank){0};
}

/* The counts per 2^shift ords *v, from old to cap ords, the new ones 0. */
static inline int fmt_rank_grow_counts(uint32_t **v, uint32_t old, uint32_t cap, unsigned shift)
{
    size_t from = fmt_rank_nr(old, shift), to = fmt_rank_nr(cap, shift);
    uint32_t *p = realloc(*v, to * sizeof(*p));

    if (!p)
        return -ENOMEM;
    memset(p + from, 0, (to - from) * sizeof(*p));
    *v = p;
    return 0;
}

__attribute__((noinline, cold)) static int fmt_rank_grow(struct fmt_rank *k, uint32_t ord)
{
    uint32_t cap = k->cap ? k->cap : 1u << FMT_RANK_SB_SHIFT;

    while (cap <= ord)
        cap *= 2;
    uint64_t *b = realloc(k->dead, (size_t)cap / 8);
    if (!b)
        return -ENOMEM;
    k->dead = b;
    uint8_t *c = realloc(k->wd, (size_t)cap / 64);
    if (!c)
        return -ENOMEM;
    k->wd = c;
    uint32_t *s = realloc(k->sd, (size_t)(cap >> FMT_RANK_SB_SHIFT) * sizeof(*s));
    if (!s)
        return -ENOMEM;
    k->sd = s;
    if (fmt_rank_grow_counts(&k->gd, k->cap, cap, FMT_RANK_GB_SHIFT) ||
        fmt_rank_grow_counts(&k->hd, k->cap, cap, FMT_RANK_HB_SHIFT))
        return -ENOMEM;
    memset(b + k->cap / 64, 0, (size_t)(cap - k->cap) / 8);
    memset(c + k->cap / 64, 0, (size_t)(cap - k->cap) / 64);
    memset(s + (k->cap >> FMT_RANK_SB_SHIFT), 0,
           (size_t)((cap - k->cap) >> FMT_RANK_SB_SHIFT) * sizeof(*s));
    k->cap = cap;
    return 0;
}

/* Block ord (the context's next) started: room for its bit. Returns 0 or
 * -ENOMEM. */
static inline int fmt_rank_start(struct fmt_rank *k, uint32_t ord)
{
    return ord < k->cap ? 0 : fmt_rank_grow(k, ord);
}

/* Block ord, started and live, ended by its own context. */
static inline void fmt_rank_end(struct fmt_rank *k, uint32_t ord)
{
    k->dead[ord >> 6] |= 1ull << (ord & 63);
    k->wd[ord >> 6]++;
    k->sd[ord >> FMT_RANK_SB_SHIFT]++;
    k->gd[ord >> FMT_RANK_GB_SHIFT]++;
    k->hd[ord >> FMT_RANK_HB_SHIFT]++;
}

/* The sum of the word counts c[a..b] of one 512 (0 <= a <= b < 8), c its
 * first: the eight bytes at once, in 16-bit lanes (they add up to 512). */
static inline uint32_t fmt_rank_wsum(const uint8_t *c, uint32_t a, uint32_t b)
{
    uint64_t x;

    memcpy(&x, c, sizeof(x));
    x &= (~0ull << (8 * a)) & (~0ull >> (8 * (7 - b)));
    x = (x & 0x00ff00ff00ff00ffull) + ((x >> 8) & 0x00ff00ff00ff00ffull);
    return (uint32_t)((x * 0x0001000100010001ull) >> 48);
}

/* Ended blocks in words w (from the bits in x on) to last, w < last: the
 * words to the end of w's 512, the whole 512s, the last 512's words. */
__attribute__((noinline)) static uint32_t fmt_rank_dead_far(const struct fmt_rank *k, uint32_t w,
                                                            uint32_t last, uint64_t x)
{
    uint32_t n = fmt_rank_pop(x);
    uint32_t s = w / FMT_RANK_SB_WORDS, sl = last / FMT_RANK_SB_WORDS;
    uint32_t a = w % FMT_RANK_SB_WORDS + 1, b = last % FMT_RANK_SB_WORDS;

    if (s == sl) /* then a <= b */
        return n + fmt_rank_wsum(k->wd + s * FMT_RANK_SB_WORDS, a, b);
    if (a < FMT_RANK_SB_WORDS)
        n += fmt_rank_wsum(k->wd + s * FMT_RANK_SB_WORDS, a, FMT_RANK_SB_WORDS - 1);
    /* the whole 512s between: by 4,096 and 65,536 where they cover one */
    while (++s < sl && s % FMT_RANK_GB_SBS)
        n += k->sd[s];
    for (; s + FMT_RANK_GB_SBS <= sl && s % FMT_RANK_HB_SBS; s += FMT_RANK_GB_SBS)
        n += k->gd[s / FMT_RANK_GB_SBS];
    for (; s + FMT_RANK_HB_SBS <= sl; s += FMT_RANK_HB_SBS)
        n += k->hd[s / FMT_RANK_HB_SBS];
    for (; s + FMT_RANK_GB_SBS <= sl; s += FMT_RANK_GB_SBS)
        n += k->gd[s / FMT_RANK_GB_SBS];
    for (; s < sl; s++)
        n += k->sd[s];
    return n + fmt_rank_wsum(k->wd + sl * FMT_RANK_SB_WORDS, 0, b);
}

_Static_assert(FMT_RANK_SB_WORDS == 8, "fmt_rank_wsum sums eight word counts");

/* Live blocks among ords o..n-1 (n started). */
static inline uint32_t fmt_rank_count(const struct fmt_rank *k, uint32_t o, uint32_t n)
{
    if (o >= n)
        return 0;
    uint32_t w = o >> 6, last = (n - 1) >> 6;
    uint64_t x = k->dead[w] >> (o & 63);
    if (w != last)
        return n - o - fmt_rank_dead_far(k, w, last, x);
    return x ? n - o - fmt_rank_pop(x) : n - o; /* none ended: no counting */
}

/* Live blocks among the last FMT_RANK_NEAR of n > FMT_RANK_NEAR started
 * (at most two words). */
static inline uint32_t fmt_rank_count_near(const struct fmt_rank *k, uint32_t n)
{
    uint32_t o = n - FMT_RANK_NEAR, w = o >> 6, last = (n - 1) >> 6;

    return FMT_RANK_NEAR - fmt_rank_pop(k->dead[w] >> (o & 63)) - (w != last ? k->wd[last] : 0);
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
    for (; k; k--)
        byte &= byte - 1;
    return 8 * i + (uint32_t)__builtin_ctz(byte);
}

/* The ord of the live block of rank r (0: the newest) among n started, or
 * -1 if fewer are live. */
static inline int64_t fmt_rank_select(const struct fmt_rank *k, uint32_t r, uint32_t n)
{
    if (!n)
        return -1;
    uint32_t last = (n - 1) >> 6, w = last, s = last / FMT_RANK_SB_WORDS;
    uint32_t top = ((n - 1) & 63) + 1; /* blocks started in the last word */
    /* the last 512's live blocks at once: past them, whole 512s below
     * (all started), down to the one that holds the rank */
    uint32_t first = s * FMT_RANK_SB_WORDS;
    uint32_t live = (last - first) * 64 + top - fmt_rank_wsum(k->wd + first, 0, last - first);
    if (r >= live) {
        r -= live;
        for (;;) {
            if (!s)
                return -1;
            s--;
            uint32_t cs = (1u << FMT_RANK_SB_SHIFT) - k->sd[s];
            if (r < cs)
                break;
            r -= cs;
        }
        w = s * FMT_RANK_SB_WORDS + FMT_RANK_SB_WORDS - 1;
    }
    /* that 512's words from the top */
    for (;; w--) {
        uint32_t c = (w == last ? top : 64) - k->wd[w];
        if (r < c)
            break;
        r -= c;
    }
    /* the (r+1)-th live block of word w from its top */
    uint64_t b = ~k->dead[w] & (w == last ? ~0ull >> (64 - top) : ~0ull);
    return (int64_t)w * 64 + fmt_rank_bit(b, fmt_rank_pop(b) - 1 - r);
}

#endif
