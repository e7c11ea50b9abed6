/* SPDX-License-Identifier: MIT */
/* LEB128 (DWARF 5, 7.6): the variable-length integers of .eh_frame's CFI,
 * which the collector's unwinder runs, and of .debug_line, which the
 * analysis reads. One decoder for both; the trace format's own varints
 * (fmt_buf_internal.h) are stricter and stay apart. */
#ifndef UTIL_LEB128_H
#define UTIL_LEB128_H

#include <stdint.h>

/* The unsigned LEB128 at *pp, which ends before end, into *v, and *pp
 * past it. Bits past the 64th are dropped. Returns 1, or 0 if end came
 * first: *v then holds the bits read, and *pp is end. */
static inline int util_uleb128(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    unsigned shift = 0;
    int done = 0;

    while (p < end && !done) {
        uint8_t b = *p++;

        if (shift < 64)
            x |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        done = !(b & 0x80);
    }
    *pp = p;
    *v = x;
    return done;
}

/* The same for a signed LEB128: sign-extended from the last byte read. */
static inline int util_sleb128(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    int done = 0;

    while (p < end && !done) {
        b = *p++;
        if (shift < 64)
            x |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        done = !(b & 0x80);
    }
    if (shift < 64 && (b & 0x40))
        x |= ~(uint64_t)0 << shift;
    *pp = p;
    *v = (int64_t)x;
    return done;
}

#endif
