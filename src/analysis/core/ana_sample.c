/* SPDX-License-Identifier: MIT */
/* The labels of sampled traces' outputs (see ana_sample.h). */
#include "analysis/core/ana_sample.h"

#include <inttypes.h>
#include <stdio.h>

#include "analysis/core/ana_json.h"

const char *ana_sample_mark(uint64_t rate)
{
    return rate ? ANA_SAMPLE_MARK : "";
}

char *ana_sample_note(char *buf, size_t size, uint64_t rate)
{
    snprintf(buf, size,
             "sampled trace (record --sample %" PRIu64 "): bytes and counts are estimates "
             "(" ANA_SAMPLE_MARK "), %sa peak is not an unbiased estimate%s",
             rate, ana_sample_has_temporary(rate) ? "and " : "",
             ana_sample_has_temporary(rate)
                 ? ""
                 : ", and temporary allocations are not estimated (left out)");
    return buf;
}

char *ana_sample_note_counted(char *buf, size_t size, uint64_t rate)
{
    snprintf(buf, size,
             "sampled trace (record --sample %" PRIu64 ") with exact counts: calls, "
             "allocations, frees, their bytes, temporary allocations and the heap's usable "
             "bytes are counted; call sites, leaks and the peak of requested bytes are "
             "estimates (" ANA_SAMPLE_MARK "), and a peak is not an unbiased estimate",
             rate);
    return buf;
}

char *ana_sample_label(char *buf, size_t size, uint64_t rate)
{
    if (!rate) {
        if (size)
            buf[0] = '\0';
        return buf;
    }
    snprintf(buf, size,
             "memscribe: sampled trace (record --sample %" PRIu64 "): figures are estimates, a "
             "peak is not an unbiased estimate%s",
             rate,
             ana_sample_has_temporary(rate) ? "" : ", temporary allocations are not estimated");
    return buf;
}

void ana_sample_json(struct ana_json *j, uint64_t rate)
{
    if (!rate)
        return;
    ana_json_key(j, "sampled");
    ana_json_begin_object(j);
    ana_json_kv_u64(j, "sample_bytes", rate);
    ana_json_kv_str(j, "bytes", "estimate");
    ana_json_kv_str(j, "counts", "estimate");
    ana_json_kv_bool(j, "peak_unbiased", false);
    if (!ana_sample_has_temporary(rate))
        ana_json_kv_str(j, "temporary", "not estimated");
    ana_json_end_object(j);
}
