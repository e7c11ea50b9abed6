/* SPDX-License-Identifier: MIT */
/* Byte counts with a unit (see util_size.h). */
#include "util/util_size.h"

#include <errno.h>
#include <stdlib.h>

int util_size_parse(const char *s, uint64_t *out)
{
    unsigned shift = 0;
    unsigned long long v;
    char *end;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'K':
    case 'k':
        shift = 10, end++;
        break;
    case 'M':
    case 'm':
        shift = 20, end++;
        break;
    case 'G':
    case 'g':
        shift = 30, end++;
        break;
    }
    if (*end || !v || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}
