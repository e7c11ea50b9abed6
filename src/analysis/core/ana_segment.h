/* SPDX-License-Identifier: MIT */
/* What every output of a `record --keep-last` trace says (docs/aggregate.md,
 * "Flight recorder"). The whole run's trace is aggregated (ana_aggregate.h)
 * and its last D is exact in segments beside it, in TRACE.last/. A segment
 * is exact from its start on; what was live then (processes, threads,
 * modules, mappings, heap blocks) it carries in at their own times, the
 * blocks counted apart (not calls, not allocations: ana_model.h
 * nr_carried), and temporaries are decided from its start. */
#ifndef ANA_SEGMENT_H
#define ANA_SEGMENT_H

#include <stddef.h>

#include "memscribe/event.h"

struct ana_json;

/* The note for info, into buf (size bytes, NUL-terminated): a segment's,
 * the whole run's (where its segments are), or "" for any other trace.
 * Returns buf. */
char *ana_segment_note(char *buf, size_t size, const struct fmt_trace_info *info);
#define ANA_SEGMENT_NOTE_SIZE 400

/* The member "keep_last": {"keep_last_ns": D, and in a segment "segment":
 * N, "from_ns": T} of a JSON object; nothing for any other trace. */
void ana_segment_json(struct ana_json *j, const struct fmt_trace_info *info);

#endif
