/* SPDX-License-Identifier: MIT */
/* Parsing durations and trace points exactly; formatting times and sizes. */
#include "analysis/core/ana_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    uint64_t ns;
} units[] = {
    {"ns", 1},
    {"us", 1000},
    {"ms", 1000000},
    {"s", 1000000000},
    {"sec", 1000000000},
    {"min", 60000000000ull},
    {"m", 60000000000ull},
    {"h", 3600000000000ull},
};

int ana_time_parse_duration(const char *s, uint64_t *ns)
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

int ana_time_parse_point(const char *s, struct ana_time_point *p)
{
    static const struct {
        const char *name;
        enum ana_time_base base;
    } bases[] = {{"start", ANA_TIME_START}, {"peak", ANA_TIME_PEAK}, {"end", ANA_TIME_END}};
    uint64_t d;
    int rc;

    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        size_t n = strlen(bases[i].name);
        if (strncmp(s, bases[i].name, n))
            continue;
        p->base = bases[i].base;
        p->offset_ns = 0;
        if (s[n] == '\0')
            return 0;
        if (s[n] != '+' && s[n] != '-')
            return -EINVAL;
        rc = ana_time_parse_duration(s + n + 1, &d);
        if (rc)
            return rc;
        if (d > INT64_MAX)
            return -ERANGE;
        p->offset_ns = s[n] == '-' ? -(int64_t)d : (int64_t)d;
        return 0;
    }
    rc = ana_time_parse_duration(s, &d);
    if (rc)
        return rc;
    if (d > INT64_MAX)
        return -ERANGE;
    p->base = ANA_TIME_ABS;
    p->offset_ns = (int64_t)d;
    return 0;
}

uint64_t ana_time_resolve(const struct ana_time_point *p, uint64_t peak_ns, uint64_t end_ns)
{
    int64_t base = 0;

    if (p->base == ANA_TIME_PEAK)
        base = (int64_t)peak_ns;
    else if (p->base == ANA_TIME_END)
        base = (int64_t)end_ns;
    int64_t t = base + p->offset_ns;
    if (t < 0)
        return 0;
    return (uint64_t)t > end_ns ? end_ns : (uint64_t)t;
}

char *ana_time_format(uint64_t ns, char *buf, size_t size)
{
    snprintf(buf, size, "%" PRIu64 ".%06" PRIu64 "s", ns / 1000000000, ns % 1000000000 / 1000);
    return buf;
}

char *ana_bytes_format(uint64_t bytes, char *buf, size_t size)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned i = 0;
    uint64_t whole = bytes, rem = 0;

    while (whole >= 1024 && i + 1 < sizeof(names) / sizeof(names[0])) {
        rem = whole % 1024;
        whole /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, size, "%" PRIu64 " B", bytes);
    else
        snprintf(buf, size, "%" PRIu64 ".%02" PRIu64 " %s", whole, rem * 100 / 1024, names[i]);
    return buf;
}
