/* SPDX-License-Identifier: MIT */
/* memscribe check's limits and their decision (ana_check.h). */
#include "analysis/diff/ana_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_size.h"

static const struct {
    const char *name, *key;
    bool bytes;
    const char *words, *whole;
    int metric;
} measures[] = {
#define ANA_CHECK_ROW(id, name, key, bytes, words, whole, metric)                                  \
    [id] = {name, key, bytes, words, whole, metric},
    ANA_CHECK_MEASURES(ANA_CHECK_ROW)
#undef ANA_CHECK_ROW
};

const char *ana_check_measure_name(enum ana_check_measure m)
{
    return measures[m].name;
}

const char *ana_check_measure_key(enum ana_check_measure m)
{
    return measures[m].key;
}

bool ana_check_measure_bytes(enum ana_check_measure m)
{
    return measures[m].bytes;
}

const char *ana_check_measure_words(enum ana_check_measure m)
{
    return measures[m].words;
}

const char *ana_check_measure_whole(enum ana_check_measure m)
{
    return measures[m].whole;
}

int ana_check_measure_metric(enum ana_check_measure m)
{
    return measures[m].metric;
}

int ana_check_measure_parse(const char *name, size_t len)
{
    for (int m = 0; m < ANA_CHECK_NR_MEASURES; m++)
        if (strlen(measures[m].name) == len && !strncmp(measures[m].name, name, len))
            return m;
    return -EINVAL;
}

/* Digits only, as a uint64_t. Returns 0 or -EINVAL. */
static int parse_count(const char *s, uint64_t *out)
{
    char *end;

    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return *end || errno ? -EINVAL : 0;
}

/* "5%", "2.5%": millionths of a percent. Returns 0 or -EINVAL. */
static int parse_percent(const char *s, uint64_t *out)
{
    uint64_t whole = 0, frac = 0, scale = ANA_CHECK_PERCENT_ONE;
    size_t n = strspn(s, "0123456789");

    if (!n || n > 12)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        whole = whole * 10 + (uint64_t)(s[i] - '0');
    s += n;
    if (*s == '.') {
        size_t d = strspn(++s, "0123456789");
        if (!d || d > 6)
            return -EINVAL;
        for (size_t i = 0; i < d; i++) {
            scale /= 10;
            frac += (uint64_t)(s[i] - '0') * scale;
        }
        s += d;
    }
    if (strcmp(s, "%"))
        return -EINVAL;
    *out = whole * ANA_CHECK_PERCENT_ONE + frac;
    return 0;
}

int ana_check_parse_limit(enum ana_check_measure m, bool growth, const char *s,
                          struct ana_check_limit *out)
{
    *out = (struct ana_check_limit){.measure = m, .growth = growth};
    if (growth && strchr(s, '%')) {
        out->percent = true;
        return parse_percent(s, &out->limit);
    }
    if (!parse_count(s, &out->limit))
        return 0;
    /* util_size_parse refuses 0, which is the limit a gate wants most. */
    return measures[m].bytes && !util_size_parse(s, &out->limit) ? 0 : -EINVAL;
}

int ana_check_parse_growth(const char *list, struct ana_check_limit *out, size_t max, size_t *nr,
                           const char **bad)
{
    char item[128];

    *bad = list;
    if (!*list)
        return -EINVAL;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        int m;

        *bad = p;
        if (len >= sizeof(item) || !eq || (m = ana_check_measure_parse(p, (size_t)(eq - p))) < 0)
            return -EINVAL;
        memcpy(item, eq + 1, len - (size_t)(eq + 1 - p));
        item[len - (size_t)(eq + 1 - p)] = 0;
        if (*nr >= max)
            return -E2BIG;
        if (ana_check_parse_limit((enum ana_check_measure)m, true, item, &out[*nr]))
            return -EINVAL;
        (*nr)++;
        p += len;
        if (*p == ',' && !*++p)
            return -EINVAL;
    }
    return 0;
}

void ana_check_eval(const struct ana_check_limit *l, const struct ana_check_values *run,
                    const struct ana_check_values *base, struct ana_check_result *out)
{
    enum ana_check_measure m = l->measure;

    *out = (struct ana_check_result){.value = run->v[m], .allowed = l->limit};
    out->known = run->known[m] && (!l->growth || (base && base->known[m]));
    if (!out->known)
        return;
    if (!l->growth) {
        out->pass = out->value <= l->limit;
        return;
    }
    out->base = base->v[m];
    out->growth = (int64_t)(out->value - out->base);
    if (out->value <= out->base) {
        out->pass = true; /* no growth passes any limit */
        if (l->percent)
            out->allowed = (uint64_t)((unsigned __int128)out->base * l->limit /
                                      (100u * ANA_CHECK_PERCENT_ONE));
        return;
    }
    unsigned __int128 grown = out->value - out->base;
    if (l->percent) {
        /* grown <= base * limit / (100 * 10^6), without rounding. */
        out->pass =
            grown * (100u * ANA_CHECK_PERCENT_ONE) <= (unsigned __int128)out->base * l->limit;
        out->allowed =
            (uint64_t)((unsigned __int128)out->base * l->limit / (100u * ANA_CHECK_PERCENT_ONE));
    } else {
        out->pass = grown <= l->limit;
    }
}
