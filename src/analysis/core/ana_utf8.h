/* SPDX-License-Identifier: MIT */
/* UTF-8 decoding for the escapers (XML, HTML, JSON): trace strings are
 * bytes, and only valid characters may reach a document. */
#ifndef ANA_UTF8_H
#define ANA_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decode one character at p (len > 0 bytes available). Returns its length
 * (1-4) and sets *cp, or 0 if the bytes there are not valid UTF-8
 * (overlong forms, surrogates and values above U+10FFFF included). */
static inline size_t ana_utf8_decode(const unsigned char *p, size_t len, uint32_t *cp)
{
    unsigned c = p[0];
    size_t n;
    uint32_t v, min;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* May this character appear in an XML 1.0 document? */
static inline int ana_xml_char_ok(uint32_t cp)
{
    return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
           (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

#endif
