/* SPDX-License-Identifier: MIT */
/* Durations as people write them, parsed exactly (util_duration.h). */
#include "util/util_duration.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static const struct {
    const char *name;
    uint64_t ns;
} units[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* µs, as the pictures print it */
    {"ms", 1000000},
    {"s", 1000000000},
    {"sec", 1000000000},
    {"min", 60000000000ull},
    {"m", 60000000000ull},
    {"h", 3600000000000ull},
};

int util_duration_parse(const char *s, uint64_t *ns)
{
    uint64_t whole = 0, frac = 0, frac_scale = 1;
    bool digits = false;
    const char *p = s;

    for (; *p >= '0' && *p <= '9'; p++, digits = true) {
        uint64_t d = (uint64_t)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10)
            return -ERANGE;
        whole = whole * 10 + d;
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
            /* Digits past 1e-18 cannot matter unless non-zero, and a
             * non-zero one finer than 1 ns is rejected below anyway. */
            if (frac_scale >= 1000000000000000000ull) {
                if (*p != '0')
                    return -EINVAL;
                continue;
            }
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_scale *= 10;
        }
    }
    if (!digits)
        return -EINVAL;
    uint64_t unit = 0;
    if (*p == '\0') {
        unit = 1000000000;
    } else {
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (!strcmp(p, units[i].name))
                unit = units[i].ns;
    }
    if (!unit)
        return -EINVAL;
    if (whole > UINT64_MAX / unit)
        return -ERANGE;
    /* frac / frac_scale * unit must be a whole number of nanoseconds. */
    uint64_t g = unit, b = frac_scale;
    while (b) {
        uint64_t t = g % b;
        g = b;
        b = t;
    }
    uint64_t f_unit = unit / g, f_scale = frac_scale / g;
    if (frac % f_scale)
        return -EINVAL;
    uint64_t part = frac / f_scale;
    if (part > UINT64_MAX / f_unit)
        return -ERANGE;
    part *= f_unit;
    if (whole * unit > UINT64_MAX - part)
        return -ERANGE;
    *ns = whole * unit + part;
    return 0;
}
