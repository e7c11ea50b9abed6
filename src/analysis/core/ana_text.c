/* SPDX-License-Identifier: MIT */
/* Escaping a trace's strings for output (see ana_text.h). */
#include "analysis/core/ana_text.h"

#include <stdint.h>
#include <string.h>

#include "analysis/core/ana_utf8.h"

/* Call put(arg, piece, n) for each piece of the escaped s. */
static void escape(const char *s, size_t len, void (*put)(void *, const char *, size_t), void *arg)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        uint32_t cp;
        size_t n = ana_utf8_decode(p + i, len - i, &cp);
        if (n && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0)) {
            put(arg, s + i, n);
            i += n;
            continue;
        }
        for (size_t k = 0; k < (n ? n : 1); k++, i++) {
            char e[4] = {'\\', 'x', hex[p[i] >> 4], hex[p[i] & 15]};
            put(arg, e, 4);
        }
    }
}

struct sink {
    char *out;
    size_t size;
    size_t used;    /* the whole result's length */
    size_t written; /* what fits: whole pieces only, never half a character */
};

static void put_buf(void *arg, const char *piece, size_t n)
{
    struct sink *k = arg;

    if (k->written == k->used && k->used + n < k->size) {
        memcpy(k->out + k->written, piece, n);
        k->written += n;
    }
    k->used += n;
}

size_t ana_text_escape(char *out, size_t size, const char *s, size_t len)
{
    struct sink k = {out, size, 0, 0};

    escape(s, len, put_buf, &k);
    if (size)
        out[k.written] = '\0';
    return k.used;
}

size_t ana_text_escape_words(char *out, size_t size, const char *s, size_t len)
{
    struct sink k = {out, size, 0, 0};

    if (len && !s[len - 1])
        len--;
    for (size_t i = 0, end; i <= len; i = end + 1) {
        for (end = i; end < len && s[end]; end++)
            ;
        if (i)
            put_buf(&k, " ", 1);
        escape(s + i, end - i, put_buf, &k);
    }
    if (size)
        out[k.written] = '\0';
    return k.used;
}

static void put_file(void *arg, const char *piece, size_t n)
{
    fwrite(piece, 1, n, arg);
}

void ana_text_put(FILE *f, const char *s, size_t len)
{
    escape(s, len, put_file, f);
}
