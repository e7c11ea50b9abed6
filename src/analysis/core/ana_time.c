/* SPDX-License-Identifier: MIT */
/* Parsing durations and trace points exactly; formatting times and sizes. */
#include "analysis/core/ana_time.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/util_duration.h"

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
        rc = util_duration_parse(s + n + 1, &d);
        if (rc)
            return rc;
        if (d > INT64_MAX)
            return -ERANGE;
        p->offset_ns = s[n] == '-' ? -(int64_t)d : (int64_t)d;
        return 0;
    }
    rc = util_duration_parse(s, &d);
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
