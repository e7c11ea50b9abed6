/* SPDX-License-Identifier: MIT */
#include "analysis/model/ana_scope_json.h"

#include "analysis/core/ana_sample.h"
#include "memscribe/trace.h"

void ana_scope_write_json(struct ana_json *j, const struct ana_scope *s, uint64_t sample_bytes)
{
    bool temp = ana_sample_has_temporary(sample_bytes);

    ana_json_key(j, "calls");
    ana_json_begin_object(j);
    /* The memory calls, as `memscribe report` lists them. */
    for (unsigned k = 1; k < ANA_NR_CALLS; k++)
        if (s->nr_calls[k] && ana_call_name(k))
            ana_json_kv_u64(j, ana_call_name(k), s->nr_calls[k]);
    ana_json_end_object(j);
    ana_json_kv_u64(j, "start_mappings", s->nr_start_maps);
    if (s->nr_carried) { /* a --keep-last segment's */
        ana_json_kv_u64(j, "carried_blocks", s->nr_carried);
        ana_json_kv_u64(j, "carried_bytes", s->carried_bytes);
    }
    ana_json_kv_u64(j, "failed_calls", s->nr_failed);
    ana_json_kv_u64(j, "allocations", s->nr_allocs);
    ana_json_kv_u64(j, "allocated_bytes", s->alloc_bytes);
    ana_json_kv_u64(j, "frees", s->nr_frees);
    ana_json_kv_u64(j, "peak_bytes", s->peak);
    ana_json_kv_u64(j, "peak_ns", s->peak_ns);
    ana_json_kv_u64(j, "peak_blocks", s->peak_blocks);
    ana_json_kv_u64(j, "leaked_bytes", s->heap);
    ana_json_kv_u64(j, "leaked_blocks", s->live_blocks);
    ana_json_kv_u64_or_null(j, "temporary", temp, s->nr_temporary);
    ana_json_kv_u64_or_null(j, "temporary_bytes", temp, s->temporary_bytes);
    ana_json_kv_u64_or_null(j, "peak_rss_bytes", s->has_rss, s->rss_peak);
    ana_json_kv_u64_or_null(j, "peak_rss_ns", s->has_rss, s->rss_peak_ns);
    ana_json_kv_u64(j, "unmatched_frees", s->nr_unmatched_frees);
    ana_json_kv_u64(j, "dropped_events", s->nr_dropped);
}
