/* SPDX-License-Identifier: MIT */
/* What every output of an aggregated trace (record --aggregate, or an
 * exact trace that reached record --max-size; docs/aggregate.md) says
 * about it: the blocks born and freed inside one interval are counted per
 * call site at the interval's end (the cut), not one by one, so counts,
 * bytes, temporaries, the peak and each site's share in it, and leaks are
 * exact, while a picture over time has the intervals' granularity. Text
 * says it in a note, JSON in the members aggregate_ns (the period) and
 * aggregate_from_ns (when it began: 0 from the start), files other tools
 * read in the place their format has for words (ana_aggregate_label). An
 * exact trace's outputs say nothing. */
#ifndef ANA_AGGREGATE_H
#define ANA_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/trace.h"

struct ana_json;

/* A period as record --aggregate takes it: "1s", "100ms", "250us",
 * "1500ns". Into buf (size bytes). Returns buf. */
char *ana_aggregate_period(uint64_t ns, char *buf, size_t size);

/* The note for trace info's aggregation, into buf (size bytes,
 * NUL-terminated); "" for an exact trace. Returns buf. */
char *ana_aggregate_note(char *buf, size_t size, const struct fmt_trace_info *info);

/* The one line an exported file or picture carries: "memscribe:
 * aggregated trace (record --aggregate=1s): ...". As ana_aggregate_note. */
char *ana_aggregate_label(char *buf, size_t size, const struct fmt_trace_info *info);
/* A buffer that holds any note or label. */
#define ANA_AGGREGATE_NOTE_SIZE 320

/* t as a cut of info's aggregated stretch, where the blocks are known:
 * the cut at or before t (up false) or at or after it (up true), the
 * trace's end (end_ns, its last event's time) being its last cut. t itself
 * where it is no later than the stretch's start (aggregate_from_ns), or in
 * an exact trace. */
uint64_t ana_aggregate_cut(const struct fmt_trace_info *info, uint64_t end_ns, uint64_t t, bool up);

/* The members "aggregate_ns": P, "aggregate_from_ns": T of a JSON object;
 * nothing for an exact trace. */
void ana_aggregate_json(struct ana_json *j, const struct fmt_trace_info *info);

#endif
