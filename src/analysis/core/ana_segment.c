/* SPDX-License-Identifier: MIT */
/* The labels of --keep-last traces' outputs (see ana_segment.h). */
#include "analysis/core/ana_segment.h"

#include <stdio.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_json.h"
#include "analysis/core/ana_time.h"

char *ana_segment_note(char *buf, size_t size, const struct fmt_trace_info *info)
{
    char d[32], t[48];

    if (size)
        buf[0] = '\0';
    if (!info->keep_last_ns)
        return buf;
    ana_aggregate_period(info->keep_last_ns, d, sizeof(d));
    if (!info->segment_nr)
        snprintf(buf, size,
                 "record --keep-last %s: the last %s of the run are exact in segments beside "
                 "this trace (TRACE.last/seg-*.mscr), each a trace of its own",
                 d, d);
    else
        snprintf(buf, size,
                 "segment %u of record --keep-last %s: exact from %s on; the processes, threads, "
                 "modules, mappings and heap blocks live then are carried in at their own times "
                 "(the blocks as 'live at start', not calls), and temporaries are decided from "
                 "then on; the whole run's totals are in the aggregated trace",
                 info->segment_nr, d, ana_time_format(info->segment_from_ns, t, sizeof(t)));
    return buf;
}

void ana_segment_json(struct ana_json *j, const struct fmt_trace_info *info)
{
    if (!info->keep_last_ns)
        return;
    ana_json_key(j, "keep_last");
    ana_json_begin_object(j);
    ana_json_kv_u64(j, "keep_last_ns", info->keep_last_ns);
    if (info->segment_nr) {
        ana_json_kv_u64(j, "segment", info->segment_nr);
        ana_json_kv_u64(j, "from_ns", info->segment_from_ns);
    }
    ana_json_end_object(j);
}
