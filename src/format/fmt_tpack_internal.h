/* SPDX-License-Identifier: MIT */
/* Packed time deltas (format 1.4, feature bit TIME_PACK; docs/format.md,
 * "Packed times"): runs of deltas of 0, 1 or 2 time units go four to a
 * byte in TIME and FREE_TIME. At 1 us most deltas are 0 or 1, a fraction
 * of a bit of information that zstd's Huffman stage cannot code in less
 * than a bit per byte; a byte for four deltas can. Writer and reader take
 * the token layout from here. */
#ifndef FMT_TPACK_INTERNAL_H
#define FMT_TPACK_INTERNAL_H

#include <stdint.h>

#include "format/fmt_buf_internal.h"

/* Token bytes: [0, 81) four digits, [81, 108) three, [108, 117) two,
 * [117, 120) one (a group cut short by a large delta or the chunk's end),
 * [120, 128) corrupt, [128, 256) one delta of any size (see below). The
 * digits are the deltas in time units, the first in the lowest base-3
 * place. */
#define FMT_TPACK_GROUP 4    /* a power of 2 (fmt_tpack_put) */
#define FMT_TPACK_BASE3 81u  /* tokens of three digits start here */
#define FMT_TPACK_BASE2 108u /* two */
#define FMT_TPACK_BASE1 117u /* one */
#define FMT_TPACK_END 120u   /* first unused token */
#define FMT_TPACK_ONE 0x80u  /* one delta: 0x80 | more << 6 | zigzag & 0x3f */
#define FMT_TPACK_MORE 0x40u /* zigzag >> 6 follows as a varint in TIME_HI */

/* Digits waiting for their group's byte, per column. */
struct fmt_tpack {
    uint32_t nr;  /* digits held, below FMT_TPACK_GROUP */
    uint32_t val; /* their base-3 number, the first digit lowest */
};

/* A group's token: its digits' number plus where groups of its length start. */
static inline uint8_t fmt_tpack_token(const struct fmt_tpack *p)
{
    static const uint8_t base[FMT_TPACK_GROUP + 1] = {0, FMT_TPACK_BASE1, FMT_TPACK_BASE2,
                                                      FMT_TPACK_BASE3, 0};
    return (uint8_t)(base[p->nr] + p->val);
}

/* Write the group held, if any (a delta too large for a digit comes next, or
 * the chunk ends). The column needs room for one byte. */
static inline void fmt_tpack_flush(struct fmt_tpack *p, struct fmt_buf *col)
{
    if (p->nr)
        col->data[col->len++] = fmt_tpack_token(p);
    p->nr = 0;
    p->val = 0;
}

/* Append the delta d (in time units, signed) to col, its high part to hi;
 * col needs room for a byte, hi for a varint. */
static inline void fmt_tpack_put(struct fmt_tpack *p, struct fmt_buf *col, struct fmt_buf *hi,
                                 int64_t d)
{
    static const uint32_t place[FMT_TPACK_GROUP] = {1, 3, 9, 27};

    if ((uint64_t)d <= 2) {
        /* The group's byte is stored every time and kept when the group is
         * full (nr reaches FMT_TPACK_GROUP, the most it can), without a
         * branch on that: with the allocations' and the frees' deltas in
         * two groups, each filling at the other's pace, the branch was
         * mispredicted on one delta in eight (callgrind's model, sqlite3 and
         * python3). The recorder's writer, rec_replay paired: sqlite3 -4 %,
         * python3 -2 %, the pool storm -3 %. */
        uint32_t val = p->val + (uint32_t)d * place[p->nr], full = ++p->nr / FMT_TPACK_GROUP;

        col->data[col->len] = (uint8_t)val;
        col->len += full;
        p->nr &= FMT_TPACK_GROUP - 1;
        p->val = val & (full - 1);
        return;
    }
    fmt_tpack_flush(p, col);
    uint64_t z = fmt_zigzag(d);
    if (z < FMT_TPACK_MORE) {
        col->data[col->len++] = (uint8_t)(FMT_TPACK_ONE | z);
        return;
    }
    col->data[col->len++] = (uint8_t)(FMT_TPACK_ONE | FMT_TPACK_MORE | (z & 0x3f));
    fmt_buf_put_varint(hi, z >> 6);
}

/* Read the next delta (in time units) of col into *d, taking a token when
 * the group held is used up. Returns 0, or -1 for an unused token; a cut
 * column sets col->bad or hi->bad (and yields 0). */
static inline int fmt_tpack_get(struct fmt_tpack *p, struct fmt_cur *col, struct fmt_cur *hi,
                                int64_t *d)
{
    if (!p->nr) {
        uint8_t t = fmt_cur_u8(col);
        if (t >= FMT_TPACK_ONE) {
            uint64_t z = t & 0x3f;
            if (t & FMT_TPACK_MORE) {
                uint64_t h = fmt_cur_varint(hi);
                if (h > (UINT64_MAX >> 6))
                    hi->bad = 1;
                z |= h << 6;
            }
            *d = fmt_unzigzag(z);
            return 0;
        }
        if (t >= FMT_TPACK_END)
            return -1;
        p->nr = t < FMT_TPACK_BASE3 ? 4 : t < FMT_TPACK_BASE2 ? 3 : t < FMT_TPACK_BASE1 ? 2 : 1;
        p->val = t - (t < FMT_TPACK_BASE3   ? 0
                      : t < FMT_TPACK_BASE2 ? FMT_TPACK_BASE3
                      : t < FMT_TPACK_BASE1 ? FMT_TPACK_BASE2
                                            : FMT_TPACK_BASE1);
    }
    *d = p->val % 3;
    p->val /= 3;
    p->nr--;
    return 0;
}

#endif
