/* SPDX-License-Identifier: MIT */
/* Two finished models of one trace held against each other, number for
 * number (ana_model_differs, ana_model.h): report --verify holds the model
 * the chunks' totals make (report --index's) against the replay's. The
 * counters are compared by the lists the parallel replay merges by
 * (ANA_SCOPE_COUNTERS, ANA_SITE_COUNTERS), so a counter added there is
 * compared too. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/model/ana_model.h"

/* How values_differ says a value: as the field's type. */
enum value_kind { VALUE_U64, VALUE_I64, VALUE_DOUBLE };

static void say_value(char *out, size_t size, uint64_t bits, enum value_kind kind)
{
    double d;

    switch (kind) {
    case VALUE_I64:
        snprintf(out, size, "%" PRId64, (int64_t)bits);
        break;
    case VALUE_DOUBLE:
        memcpy(&d, &bits, sizeof(d));
        snprintf(out, size, "%.17g", d);
        break;
    default:
        snprintf(out, size, "%" PRIu64, bits);
    }
}

/* Two doubles' bits: the same but for the last bits, which the order of
 * adding moves (a variance's sum over a parallel replay's ranges). */
static bool doubles_near(uint64_t x, uint64_t y)
{
    double a, b;

    memcpy(&a, &x, sizeof(a));
    memcpy(&b, &y, sizeof(b));
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* The first of n values that differ (bit for bit; doubles by
 * doubles_near), said as what[i]: 1, else 0. */
static int values_differ(const uint64_t *a, const uint64_t *b, size_t n, enum value_kind kind,
                         const char *who, const char *what, char *why, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        char x[32], y[32], at[24] = "";

        if (a[i] == b[i] || (kind == VALUE_DOUBLE && doubles_near(a[i], b[i])))
            continue;
        say_value(x, sizeof(x), a[i], kind);
        say_value(y, sizeof(y), b[i], kind);
        if (n > 1)
            snprintf(at, sizeof(at), "[%zu]", i);
        snprintf(why, size, "%s: %s%s is %s against %s", who, what, at, x, y);
        return 1;
    }
    return 0;
}

/* A field of x and y (structs of one type) compared as n uint64_t. */
#define FIELD_DIFFERS(x, y, name, who, why, size)                                                  \
    values_differ((const uint64_t *)(const void *)&(x)->name,                                      \
                  (const uint64_t *)(const void *)&(y)->name,                                      \
                  sizeof((x)->name) / sizeof(uint64_t),                                            \
                  _Generic((x)->name, int64_t                                                      \
                           : VALUE_I64, double                                                     \
                           : VALUE_DOUBLE, default                                                 \
                           : VALUE_U64),                                                           \
                  who, #name, why, size)

static int flag_differs(bool a, bool b, const char *who, const char *what, char *why, size_t size)
{
    uint64_t x = a, y = b;

    return values_differ(&x, &y, 1, VALUE_U64, who, what, why, size);
}

static int scope_differs(const struct ana_scope *a, const struct ana_scope *b, const char *who,
                         char *why, size_t size)
{
#define SCOPE_COUNTER_DIFFERS(name, dim) FIELD_DIFFERS(a, b, name, who, why, size) ||
    uint64_t pa = a->pid, pb = b->pid;

    return flag_differs(a->seen, b->seen, who, "seen", why, size) ||
           values_differ(&pa, &pb, 1, false, who, "pid", why, size) ||
           ANA_SCOPE_COUNTERS(SCOPE_COUNTER_DIFFERS)
               FIELD_DIFFERS(a, b, first_ns, who, why, size) ||
           FIELD_DIFFERS(a, b, last_ns, who, why, size) ||
           FIELD_DIFFERS(a, b, heap, who, why, size) ||
           FIELD_DIFFERS(a, b, live_blocks, who, why, size) ||
           FIELD_DIFFERS(a, b, running_heap, who, why, size) ||
           FIELD_DIFFERS(a, b, running_blocks, who, why, size) ||
           FIELD_DIFFERS(a, b, peak, who, why, size) ||
           FIELD_DIFFERS(a, b, peak_ns, who, why, size) ||
           FIELD_DIFFERS(a, b, peak_blocks, who, why, size) ||
           flag_differs(a->ended, b->ended, who, "ended", why, size) ||
           FIELD_DIFFERS(a, b, end_ns, who, why, size) ||
           flag_differs(a->has_rss, b->has_rss, who, "has_rss", why, size) ||
           FIELD_DIFFERS(a, b, rss, who, why, size) ||
           FIELD_DIFFERS(a, b, rss_peak, who, why, size) ||
           FIELD_DIFFERS(a, b, rss_peak_ns, who, why, size);
#undef SCOPE_COUNTER_DIFFERS
}

static int site_differs(const struct ana_site *a, const struct ana_site *b, const char *who,
                        char *why, size_t size)
{
#define SITE_COUNTER_DIFFERS(type, name) FIELD_DIFFERS(a, b, name, who, why, size) ||
    return ANA_SITE_COUNTERS(SITE_COUNTER_DIFFERS)
               FIELD_DIFFERS(a, b, peak_bytes, who, why, size) ||
           FIELD_DIFFERS(a, b, peak_all_bytes, who, why, size);
#undef SITE_COUNTER_DIFFERS
}

/* The scopes of a list (the images, the programs), one that a has and b
 * has not compared with one never seen. */
static int scopes_differ(const struct ana_model *a, const struct ana_model *b,
                         uint32_t (*nr)(const struct ana_model *),
                         const struct ana_scope *(*get)(const struct ana_model *, uint32_t),
                         const char *what, char *why, size_t size)
{
    static const struct ana_scope unseen = {0};
    uint32_t n = nr(a), nb = nr(b);
    char who[48];

    for (uint32_t i = 0; i < (n > nb ? n : nb); i++) {
        const struct ana_scope *x = i < n ? get(a, i) : &unseen;
        const struct ana_scope *y = i < nb ? get(b, i) : &unseen;

        snprintf(who, sizeof(who), "%s %" PRIu32, what, i);
        if (scope_differs(x, y, who, why, size))
            return 1;
    }
    return 0;
}

int ana_model_differs(const struct ana_model *a, const struct ana_model *b, bool sites, char *why,
                      size_t size)
{
    static const struct ana_site none = {0};
    uint32_t n, nb;
    char who[48];

    if (scope_differs(ana_model_total(a), ana_model_total(b), "all processes", why, size) ||
        scopes_differ(a, b, ana_model_nr_images, ana_model_image, "image", why, size) ||
        scopes_differ(a, b, ana_model_nr_programs, ana_model_program, "program", why, size))
        return 1;
    n = ana_model_nr_sites(a), nb = ana_model_nr_sites(b);
    for (uint32_t k = 0; sites && k < (n > nb ? n : nb); k++) {
        const struct ana_site *x = k < n ? ana_model_site(a, k) : NULL;
        const struct ana_site *y = k < nb ? ana_model_site(b, k) : NULL;
        uint64_t px = x ? ana_model_site_program_peak(a, k) : 0;
        uint64_t py = y ? ana_model_site_program_peak(b, k) : 0;

        snprintf(who, sizeof(who), "stack %" PRIu32, k);
        if (site_differs(x ? x : &none, y ? y : &none, who, why, size) ||
            values_differ(&px, &py, 1, false, who, "bytes at its program's peak", why, size))
            return 1;
    }
    return 0;
}
