/* SPDX-License-Identifier: MIT */
/* Byte buffers, LEB128 varints and bounded read cursors: the encoding
 * primitives of every block (docs/format.md, "Primitives"). */
#ifndef FMT_BUF_INTERNAL_H
#define FMT_BUF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FMT_VARINT_MAX 10

/* A growable byte buffer. The put functions do not check capacity: call
 * fmt_buf_reserve() first for the most bytes a record can take, so the hot
 * path costs one comparison per event instead of one per byte. */
struct fmt_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
};

/* Make room for extra more bytes. Returns 0 or -ENOMEM. */
int fmt_buf_reserve(struct fmt_buf *b, size_t extra);
void fmt_buf_free(struct fmt_buf *b);

static inline void fmt_buf_put_u8(struct fmt_buf *b, uint8_t v)
{
    b->data[b->len++] = v;
}

static inline void fmt_buf_put_varint(struct fmt_buf *b, uint64_t v)
{
    uint8_t *p = b->data + b->len;

    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->len = (size_t)(p - b->data);
}

static inline void fmt_buf_put_bytes(struct fmt_buf *b, const void *src, size_t n)
{
    if (n)
        memcpy(b->data + b->len, src, n);
    b->len += n;
}

/* A varint split over two columns: its first byte to b, the rest (the
 * value >> 7, as a varint) to ext. Two byte planes compress better than
 * one stream mixing low and high bytes (docs/format.md, "Split varint"). */
static inline void fmt_buf_put_split(struct fmt_buf *b, struct fmt_buf *ext, uint64_t v)
{
    if (v < 0x80) {
        b->data[b->len++] = (uint8_t)v;
        return;
    }
    b->data[b->len++] = (uint8_t)(v | 0x80);
    fmt_buf_put_varint(ext, v >> 7);
}

/* Reserve, then append; for cold paths. Return 0 or -ENOMEM. */
int fmt_buf_add_varint(struct fmt_buf *b, uint64_t v);
int fmt_buf_add_bytes(struct fmt_buf *b, const void *src, size_t n);
/* A varint length followed by the bytes. */
int fmt_buf_add_string(struct fmt_buf *b, const void *s, size_t n);

/* Signed values as varints: 0, -1, 1, -2, ... map to 0, 1, 2, 3, ... */
static inline uint64_t fmt_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t fmt_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A read cursor over untrusted bytes. Reading past the end or an overlong
 * varint yields 0 and sets bad, which stays set: callers check it once per
 * record instead of after every field. */
struct fmt_cur {
    const uint8_t *p;
    const uint8_t *end;
    int bad;
};

static inline void fmt_cur_init(struct fmt_cur *c, const void *p, size_t len)
{
    c->p = p;
    c->end = p ? c->p + len : c->p; /* NULL + 0 is undefined in C */
    c->bad = 0;
}

uint64_t fmt_cur_varint_slow(struct fmt_cur *c);

static inline uint64_t fmt_cur_varint(struct fmt_cur *c)
{
    if (c->p < c->end && *c->p < 0x80)
        return *c->p++;
    return fmt_cur_varint_slow(c);
}

static inline uint8_t fmt_cur_u8(struct fmt_cur *c)
{
    if (c->p < c->end)
        return *c->p++;
    c->bad = 1;
    return 0;
}

/* Read a split varint (fmt_buf_put_split). */
static inline uint64_t fmt_cur_split(struct fmt_cur *c, struct fmt_cur *ext)
{
    uint8_t first = fmt_cur_u8(c);

    if (first < 0x80)
        return first;
    uint64_t hi = fmt_cur_varint(ext);
    if (hi > (UINT64_MAX >> 7)) {
        ext->bad = 1;
        return 0;
    }
    return (first & 0x7f) | hi << 7;
}

/* A varint that must fit in 32 bits. */
static inline uint32_t fmt_cur_u32(struct fmt_cur *c)
{
    uint64_t v = fmt_cur_varint(c);

    if (v > UINT32_MAX) {
        c->bad = 1;
        return 0;
    }
    return (uint32_t)v;
}

/* Take n bytes; NULL (and bad set) if fewer remain. */
static inline const uint8_t *fmt_cur_bytes(struct fmt_cur *c, uint64_t n)
{
    const uint8_t *p = c->p;

    if (n > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return NULL;
    }
    if (n)
        c->p += n;
    return p;
}

static inline size_t fmt_cur_left(const struct fmt_cur *c)
{
    return (size_t)(c->end - c->p);
}

#endif
