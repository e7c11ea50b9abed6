/* SPDX-License-Identifier: MIT */
/* Growable buffers and the slow path of varint decoding. */
#include "format/fmt_buf_internal.h"

#include <errno.h>
#include <stdlib.h>

int fmt_buf_reserve(struct fmt_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len)
        return -ENOMEM;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

void fmt_buf_free(struct fmt_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int fmt_buf_add_varint(struct fmt_buf *b, uint64_t v)
{
    int rc = fmt_buf_reserve(b, FMT_VARINT_MAX);

    if (rc)
        return rc;
    fmt_buf_put_varint(b, v);
    return 0;
}

int fmt_buf_add_bytes(struct fmt_buf *b, const void *src, size_t n)
{
    int rc = fmt_buf_reserve(b, n);

    if (rc)
        return rc;
    fmt_buf_put_bytes(b, src, n);
    return 0;
}

int fmt_buf_add_string(struct fmt_buf *b, const void *s, size_t n)
{
    int rc = fmt_buf_reserve(b, FMT_VARINT_MAX + n);

    if (rc)
        return rc;
    fmt_buf_put_varint(b, n);
    fmt_buf_put_bytes(b, s, n);
    return 0;
}

uint64_t fmt_cur_varint_slow(struct fmt_cur *c)
{
    uint64_t v = 0;

    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end)
            break;
        uint8_t byte = *c->p++;
        /* The tenth byte may only carry the top bit of a 64-bit value. */
        if (shift == 63 && byte > 1)
            break;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}
