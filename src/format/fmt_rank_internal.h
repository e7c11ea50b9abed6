/* SPDX-License-Identifier: MIT */
/* The live blocks a context started in the chunk (format 1.5, feature bit
 * FREE_RANKS; docs/format.md, "References"): a free names its own
 * context's block by its rank among them (0: the newest still live)
 * instead of by how many blocks the context started since. Where frees
 * hit blocks at random (the pool storm: one of 4,096) the distance spreads
 * over ~13.4 bits of entropy, the rank over 12.
 *
 * A bit per block in start order (its ord: how many blocks the context had
 * started in the chunk before it), set when it starts and cleared when the
 * context ends it, and their counts per 64 and per 512 bits, so that
 * counting and selecting over long spans step by 64 and 512 without
 * counting bits (the pool storm: 4,096 blocks back on average). Writer and reader keep it alike;
 * the arrays are kept from chunk to chunk and cleared as far as used. */
#ifndef FMT_RANK_INTERNAL_H
#define FMT_RANK_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FMT_RANK_SB_SHIFT 9 /* 512 ords per count */
#define FMT_RANK_NEAR 64    /* references this near go by distance */
#define FMT_RANK_SB_WORDS (1u << (FMT_RANK_SB_SHIFT - 6))

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
    uint64_t *bits;
    uint8_t *wc;   /* live bits per word of bits */
    uint32_t *sb;  /* live bits per 512 ords */
    uint32_t cap;  /* ords the arrays hold, a multiple of 512 */
    uint32_t used; /* ords set since the last clear */
};

static inline void fmt_rank_clear(struct fmt_rank *k)
{
    if (k->used) {
        size_t words = (size_t)(k->used + 63) >> 6;
        memset(k->bits, 0, words * sizeof(*k->bits));
        memset(k->wc, 0, words);
        memset(k->sb, 0, ((size_t)((k->used - 1) >> FMT_RANK_SB_SHIFT) + 1) * sizeof(*k->sb));
    }
    k->used = 0;
}

static inline void fmt_rank_free(struct fmt_rank *k)
{
    free(k->bits);
    free(k->wc);
    free(k->sb);
    *k = (struct fmt_rank){0};
}

__attribute__((noinline, cold)) static int fmt_rank_grow(struct fmt_rank *k, uint32_t ord)
{
    uint32_t cap = k->cap ? k->cap : 1u << FMT_RANK_SB_SHIFT;

    while (cap <= ord)
        cap *= 2;
    uint64_t *b = realloc(k->bits, (size_t)cap / 8);
    if (!b)
        return -ENOMEM;
    k->bits = b;
    uint8_t *c = realloc(k->wc, (size_t)cap / 64);
    if (!c)
        return -ENOMEM;
    k->wc = c;
    uint32_t *s = realloc(k->sb, (size_t)(cap >> FMT_RANK_SB_SHIFT) * sizeof(*s));
    if (!s)
        return -ENOMEM;
    k->sb = s;
    memset(b + k->cap / 64, 0, (size_t)(cap - k->cap) / 8);
    memset(c + k->cap / 64, 0, (size_t)(cap - k->cap) / 64);
    memset(s + (k->cap >> FMT_RANK_SB_SHIFT), 0,
           (size_t)((cap - k->cap) >> FMT_RANK_SB_SHIFT) * sizeof(*s));
    k->cap = cap;
    return 0;
}

/* Block ord (the context's next) started. Returns 0 or -ENOMEM. */
static inline int fmt_rank_start(struct fmt_rank *k, uint32_t ord)
{
    if (ord >= k->cap && fmt_rank_grow(k, ord))
        return -ENOMEM;
    k->bits[ord >> 6] |= 1ull << (ord & 63);
    k->wc[ord >> 6]++;
    k->sb[ord >> FMT_RANK_SB_SHIFT]++;
    k->used = ord + 1;
    return 0;
}

/* Block ord, started and live, ended. */
static inline void fmt_rank_end(struct fmt_rank *k, uint32_t ord)
{
    k->bits[ord >> 6] &= ~(1ull << (ord & 63));
    k->wc[ord >> 6]--;
    k->sb[ord >> FMT_RANK_SB_SHIFT]--;
}

/* fmt_rank_count past o's word: the live bits of o's word from o (x), the
 * counts of the words to the end of its 512, of the whole 512s, of the
 * last 512's words. */
__attribute__((noinline)) static uint32_t fmt_rank_count_far(const struct fmt_rank *k, uint32_t w,
                                                             uint32_t last, uint64_t x)
{
    uint32_t n = fmt_rank_pop(x);

    while (++w <= last && (w & (FMT_RANK_SB_WORDS - 1)))
        n += k->wc[w];
    if (w > last)
        return n;
    uint32_t s = w >> (FMT_RANK_SB_SHIFT - 6);
    for (; s < last >> (FMT_RANK_SB_SHIFT - 6); s++)
        n += k->sb[s];
    for (w = s << (FMT_RANK_SB_SHIFT - 6); w <= last; w++)
        n += k->wc[w];
    return n;
}

/* Live blocks among ords o..used-1. */
static inline uint32_t fmt_rank_count(const struct fmt_rank *k, uint32_t o)
{
    if (o >= k->used)
        return 0;
    uint32_t w = o >> 6, last = (k->used - 1) >> 6;
    uint64_t x = k->bits[w] >> (o & 63);
    if (w != last)
        return fmt_rank_count_far(k, w, last, x);
    /* all of them live (a thread freeing its oldest of a few) needs no count */
    return x == ~0ull >> (64 - (k->used - o)) ? k->used - o : fmt_rank_pop(x);
}

/* Live blocks among the last FMT_RANK_NEAR (at most two words), used >
 * FMT_RANK_NEAR. */
static inline uint32_t fmt_rank_count_near(const struct fmt_rank *k)
{
    uint32_t o = k->used - FMT_RANK_NEAR, w = o >> 6, last = (k->used - 1) >> 6;

    return fmt_rank_pop(k->bits[w] >> (o & 63)) + (w != last ? k->wc[last] : 0);
}

/* The ord of the live block of rank r (0: the newest), or -1 if fewer are
 * live. */
static inline int64_t fmt_rank_select(const struct fmt_rank *k, uint32_t r)
{
    if (!k->used)
        return -1;
    uint32_t w = (k->used - 1) >> 6;
    /* words of the last 512, down to its first */
    for (;;) {
        uint32_t c = k->wc[w];
        if (r < c)
            break;
        r -= c;
        if (!(w & (FMT_RANK_SB_WORDS - 1))) {
            /* whole 512s below, then that 512's words from its top */
            uint32_t s = w >> (FMT_RANK_SB_SHIFT - 6);
            for (;;) {
                if (!s)
                    return -1;
                s--;
                if (r < k->sb[s])
                    break;
                r -= k->sb[s];
            }
            w = (s << (FMT_RANK_SB_SHIFT - 6)) + FMT_RANK_SB_WORDS;
        }
        w--;
    }
    /* the (r+1)-th set bit of word w from its top */
    uint64_t b = k->bits[w];
    for (; r; r--)
        b &= ~(1ull << (63 - __builtin_clzll(b)));
    return (int64_t)w * 64 + (63 - __builtin_clzll(b));
}

#endif
