/* SPDX-License-Identifier: MIT */
/* One scope's totals as JSON members, under the names of docs/json.md:
 * `report --format json` (per process and in total) and the HTML report's
 * summary write the same numbers through this one function. */
#ifndef ANA_SCOPE_JSON_H
#define ANA_SCOPE_JSON_H

#include "analysis/core/ana_json.h"
#include "analysis/model/ana_model.h"

/* Members of the object being written: calls (by function), failed_calls,
 * allocations, allocated_bytes, frees, peak_bytes, peak_ns, peak_blocks,
 * leaked_bytes, leaked_blocks, temporary, temporary_bytes, peak_rss_bytes
 * and peak_rss_ns (null when no RSS was recorded), unmatched_frees,
 * dropped_events. sample_bytes: the trace's sampling rate (0: exact); a
 * sampled trace's temporary and temporary_bytes are null (ana_sample.h). */
void ana_scope_write_json(struct ana_json *j, const struct ana_scope *s, uint64_t sample_bytes);

#endif
