/* SPDX-License-Identifier: MIT */
/* The labels of aggregated traces' outputs (see ana_aggregate.h). */
#include "analysis/core/ana_aggregate.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/core/ana_json.h"
#include "analysis/core/ana_time.h"

char *ana_aggregate_period(uint64_t ns, char *buf, size_t size)
{
    static const struct {
        uint64_t ns;
        const char *unit;
    } units[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}, {1, "ns"}};
    unsigned i = 0;

    while (ns && ns % units[i].ns)
        i++;
    snprintf(buf, size, "%" PRIu64 "%s", ns ? ns / units[i].ns : 0, units[i].unit);
    return buf;
}

/* The words both forms share: how the trace came to be aggregated. */
static void how(char *buf, size_t size, const struct fmt_trace_info *info)
{
    char p[32], t[64];

    ana_aggregate_period(info->aggregate_ns, p, sizeof(p));
    if (info->aggregate_from_ns)
        snprintf(buf, size,
                 "aggregated from %s on, in intervals of %s (the exact trace reached record "
                 "--max-size)",
                 ana_time_format(info->aggregate_from_ns, t, sizeof(t)), p);
    else
        snprintf(buf, size, "aggregated trace (record --aggregate=%s)", p);
}

/* What the trace is, for a note and a label: false (buf emptied) for an
 * exact trace. */
static bool describe(char *buf, size_t size, char *h, size_t h_size,
                     const struct fmt_trace_info *info)
{
    if (!info->aggregate_ns) {
        if (size)
            buf[0] = '\0';
        return false;
    }
    how(h, h_size, info);
    return true;
}

char *ana_aggregate_note(char *buf, size_t size, const struct fmt_trace_info *info)
{
    char h[160];

    if (describe(buf, size, h, sizeof(h), info))
        snprintf(buf, size,
                 "%s: blocks born and freed inside one interval are counted per call site, not "
                 "one by one; counts, bytes, temporaries, the peak and leaks are exact, times over "
                 "the trace have the intervals' granularity",
                 h);
    return buf;
}

char *ana_aggregate_label(char *buf, size_t size, const struct fmt_trace_info *info)
{
    char h[160];

    if (describe(buf, size, h, sizeof(h), info))
        snprintf(buf, size, "memscribe: %s: totals exact, times at interval granularity", h);
    return buf;
}

uint64_t ana_aggregate_cut(const struct fmt_trace_info *info, uint64_t end_ns, uint64_t t, bool up)
{
    uint64_t p = info->aggregate_ns, down = p ? t - t % p : t;

    /* The end is a cut, and so is any time past it. */
    if (!p || t <= info->aggregate_from_ns || t == down || t >= end_ns)
        return t;
    if (!up)
        return down > info->aggregate_from_ns ? down : info->aggregate_from_ns;
    return p < end_ns - down ? down + p : end_ns;
}

void ana_aggregate_json(struct ana_json *j, const struct fmt_trace_info *info)
{
    if (!info->aggregate_ns)
        return;
    ana_json_kv_u64(j, "aggregate_ns", info->aggregate_ns);
    ana_json_kv_u64(j, "aggregate_from_ns", info->aggregate_from_ns);
}
