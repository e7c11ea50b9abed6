/* SPDX-License-Identifier: MIT */
/* Pairing two runs' call sites by key (ana_diff.h): rows are collected
 * per side, sorted by key and merged, so equal keys meet without a hash
 * table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff/ana_diff.h"
#include "util/util_array.h"

static const char *const names[ANA_DIFF_NR_METRICS] = {
    "allocations",   "bytes",           "peak",        "leaked",       "temporary", "lost",
    "leaked-blocks", "definitely-lost", "lost-blocks", "possibly-lost"};
static const char *const keys[ANA_DIFF_NR_METRICS] = {
    "allocations", "allocated_bytes",    "peak_bytes",    "leaked_bytes",
    "temporary",   "lost_bytes",         "leaked_blocks", "definitely_lost_bytes",
    "lost_blocks", "possibly_lost_bytes"};

void ana_diff_init(struct ana_diff *d)
{
    memset(d, 0, sizeof(*d));
}

void ana_diff_release(struct ana_diff *d)
{
    for (size_t i = 0; i < d->nr_rows; i++)
        free(d->rows[i].key);
    free(d->rows);
    ana_diff_init(d);
}

int ana_diff_add(struct ana_diff *d, enum ana_diff_side side, const char *key,
                 const uint64_t v[ANA_DIFF_NR_METRICS])
{
    struct ana_diff_row *r;

    if (d->finished || (side != ANA_DIFF_BASE && side != ANA_DIFF_NEW))
        return -EINVAL;
    if (UTIL_ARRAY_RESERVE(d->rows, d->cap, (size_t)d->nr_rows + 1, 256))
        return -ENOMEM;
    r = &d->rows[d->nr_rows];
    memset(r, 0, sizeof(*r));
    r->key = strdup(key);
    if (!r->key)
        return -ENOMEM;
    memcpy(r->v[side], v, sizeof(r->v[side]));
    for (int m = 0; m < ANA_DIFF_NR_METRICS; m++)
        d->total[side][m] += v[m];
    d->nr_rows++;
    return 0;
}

static int by_key(const void *x, const void *y)
{
    const struct ana_diff_row *a = x, *b = y;

    return strcmp(a->key, b->key);
}

void ana_diff_finish(struct ana_diff *d)
{
    size_t k = 0;

    if (d->finished)
        return;
    d->finished = 1;
    if (!d->nr_rows)
        return;
    qsort(d->rows, d->nr_rows, sizeof(*d->rows), by_key);
    for (size_t i = 1; i < d->nr_rows; i++) {
        struct ana_diff_row *r = &d->rows[i];

        if (!strcmp(r->key, d->rows[k].key)) {
            for (int s = 0; s < 2; s++)
                for (int m = 0; m < ANA_DIFF_NR_METRICS; m++)
                    d->rows[k].v[s][m] += r->v[s][m];
            free(r->key);
        } else {
            d->rows[++k] = *r;
        }
    }
    d->nr_rows = k + 1;
}

int64_t ana_diff_change(const struct ana_diff_row *r, enum ana_diff_metric m)
{
    return (int64_t)(r->v[ANA_DIFF_NEW][m] - r->v[ANA_DIFF_BASE][m]);
}

static enum ana_diff_metric sort_metric;

static int by_change(const void *x, const void *y)
{
    const struct ana_diff_row *a = x, *b = y;
    int64_t ca = ana_diff_change(a, sort_metric), cb = ana_diff_change(b, sort_metric);
    uint64_t ma = ca < 0 ? -(uint64_t)ca : (uint64_t)ca;
    uint64_t mb = cb < 0 ? -(uint64_t)cb : (uint64_t)cb;

    if (ma != mb)
        return ma > mb ? -1 : 1;
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return strcmp(a->key, b->key);
}

void ana_diff_sort(struct ana_diff *d, enum ana_diff_metric m)
{
    sort_metric = m;
    if (d->nr_rows)
        qsort(d->rows, d->nr_rows, sizeof(*d->rows), by_change);
}

const char *ana_diff_metric_name(enum ana_diff_metric m)
{
    return (unsigned)m < ANA_DIFF_NR_METRICS ? names[m] : "unknown";
}

const char *ana_diff_metric_key(enum ana_diff_metric m)
{
    return (unsigned)m < ANA_DIFF_NR_METRICS ? keys[m] : "unknown";
}

int ana_diff_metric_parse(const char *name)
{
    for (int m = 0; m < ANA_DIFF_NR_SHOWN; m++)
        if (!strcmp(name, names[m]))
            return m;
    return -EINVAL;
}
