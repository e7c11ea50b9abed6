/* SPDX-License-Identifier: MIT */
/* A sampled trace's exact counters, by scope (see ana_exact.h). */
#include "analysis/model/ana_exact.h"

#include <string.h>

#include "analysis/core/ana_json.h"
#include "analysis/model/ana_model.h"
#include "memscribe/trace.h"

static void add_image(struct ana_exact *x, const struct ana_scope *img)
{
    if (!img->has_exact)
        return;
    for (unsigned c = 0; c < FMT_CTR_ALL; c++)
        x->v[c] += img->exact[c];
    x->uncounted |= img->exact[FMT_CTR_UNCOUNTED] != 0;
    x->peak_ns = img->exact_peak_ns;
    x->present = true;
    x->nr_images++;
}

void ana_exact_of(const struct ana_model *m, const struct ana_scope *s, struct ana_exact *out)
{
    memset(out, 0, sizeof(*out));
    if (s->image != UINT32_MAX) {
        add_image(out, s);
    } else {
        for (uint32_t i = 0; i < ana_model_nr_images(m); i++)
            add_image(out, ana_model_image(m, i));
    }
    /* Peaks of several images add up to no peak of the whole. */
    out->has_peak = out->nr_images == 1;
    if (!out->has_peak)
        out->v[FMT_CTR_PEAK_USABLE] = 0;
}

static void kv(struct ana_json *j, const char *key, const struct ana_exact *x, unsigned c)
{
    ana_json_kv_u64(j, key, x->v[c]);
}

void ana_exact_json(struct ana_json *j, const struct ana_exact *x)
{
    ana_json_key(j, "exact");
    if (!x->present) {
        ana_json_null(j);
        return;
    }
    ana_json_begin_object(j);
    ana_json_key(j, "calls");
    ana_json_begin_object(j);
    for (unsigned k = FMT_EV_MALLOC; k <= FMT_EV_PVALLOC; k++)
        if (x->v[FMT_CTR_CALLS + k])
            ana_json_kv_u64(j, fmt_kind_name(k), x->v[FMT_CTR_CALLS + k]);
    ana_json_end_object(j);
    kv(j, "allocations", x, FMT_CTR_ALLOCS);
    kv(j, "allocated_bytes", x, FMT_CTR_ALLOC_BYTES);
    kv(j, "allocated_usable_bytes", x, FMT_CTR_ALLOC_USABLE);
    kv(j, "frees", x, FMT_CTR_FREES);
    kv(j, "freed_usable_bytes", x, FMT_CTR_FREE_USABLE);
    kv(j, "failed_calls", x, FMT_CTR_FAILED);
    kv(j, "temporary", x, FMT_CTR_TEMPORARY);
    kv(j, "temporary_bytes", x, FMT_CTR_TEMPORARY_BYTES);
    kv(j, "heap_usable_bytes", x, FMT_CTR_HEAP_USABLE);
    ana_json_key(j, "peak_usable_bytes");
    if (x->has_peak)
        ana_json_u64(j, x->v[FMT_CTR_PEAK_USABLE]);
    else
        ana_json_null(j);
    ana_json_key(j, "peak_usable_ns");
    if (x->has_peak)
        ana_json_u64(j, x->peak_ns);
    else
        ana_json_null(j);
    ana_json_key(j, "size_classes"); /* [lowest size of the class, allocations] */
    ana_json_begin_array(j);
    for (unsigned c = 0; c < FMT_CTR_NR_CLASSES; c++) {
        if (!x->v[FMT_CTR_CLASS + c])
            continue;
        ana_json_begin_array(j);
        ana_json_u64(j, c ? (uint64_t)1 << c : 0);
        ana_json_u64(j, x->v[FMT_CTR_CLASS + c]);
        ana_json_end_array(j);
    }
    ana_json_end_array(j);
    ana_json_kv_bool(j, "uncounted", x->uncounted);
    ana_json_end_object(j);
}
