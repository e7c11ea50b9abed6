/* SPDX-License-Identifier: MIT */
/* The flight recorder of `record --keep-last D` (docs/aggregate.md, "Flight
 * recorder"): beside the whole run's aggregated trace, the events of the
 * last D exactly, in segments: exact traces of S each (D / REC_KEEP_PARTS, a
 * multiple of the aggregator's period), in the folder TRACE.last/. Of the
 * segments written, the latest ones that hold D are kept, the fewest that
 * do: at the end, the kept span runs from the oldest kept segment's start
 * to the run's last event and is at least D (or the whole run, if shorter)
 * and at most D + S. Kept means on disk: a segment is removed only once the
 * ones after it hold D of flushed events.
 *
 * Each segment stands alone. It begins with what was live when it began,
 * at their own times: the processes, threads (with their names), modules,
 * pools and Windows heaps (events copied as they came), the mappings (from
 * the whole run's writer) and the heap blocks (from the aggregator), then
 * every event from its start on, as an exact trace writes them. Its stacks
 * carry the whole run's ids (fmt_writer_copy_stacks), so an event goes to
 * both writers as it is. A segment costs its beginning (every live block
 * and mapping, the stacks): hence a few segments per D, not many.
 *
 * Not thread-safe: the recorder's one thread calls it, from the merge
 * (rec_merge.c), before the aggregator sees the event. */
#ifndef REC_KEEP_H
#define REC_KEEP_H

#include <stdint.h>

#include "format/fmt_writer.h"
#include "memscribe/event.h"
#include "recorder/rec_agg.h"

struct rec_keep;

/* Segments per D. Each costs its beginning (every live block, mapping,
 * module, thread, the stacks: bench/notes/aggregate.md, "The flight recorder"):
 * with a million live blocks and D of a second, quarters cost the recorder
 * 32 % more instructions per call than halves, past the 5 % any change may
 * cost; so halves, and D plus a half is the most kept. */
#define REC_KEEP_PARTS 2

/* Segments of keep_ns / REC_KEEP_PARTS each (rounded down to the aggregator's
 * period period_ns, at least one period, so that each begins at a cut) in
 * the folder dir (made 0700 if missing; one already there must be the
 * caller's or root's, as util_outfile_dir says; the segments of an earlier
 * recording there are removed), with the trace info and writer options of
 * the whole run's trace, whose writer main and aggregator agg hold the
 * stacks, the mappings and the live blocks. The info's strings but its host
 * name must outlive it. Returns 0, or -errno with why (why_size bytes)
 * saying what was refused or went wrong ("refused: an existing directory
 * of user nobody (uid 65534), not yours"). */
int rec_keep_new(struct rec_keep **out, const char *dir, const struct fmt_trace_info *info,
                 const struct fmt_writer_options *wopt, uint64_t keep_ns, uint64_t period_ns,
                 struct fmt_writer *main, struct rec_agg *agg, char *why, size_t why_size);

/* The merge's events, as rec_agg_heap, rec_agg_realloc and rec_agg_event
 * take them. A segment whose time is over is finished first and the next
 * begun. Returns 0, or -errno when the segments stopped (the whole run's
 * trace goes on: rec_keep_error says why later). */
int rec_keep_heap(struct rec_keep *k, const struct fmt_writer_who *who, unsigned kind,
                  uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack);
int rec_keep_realloc(struct rec_keep *k, const struct fmt_writer_who *who, unsigned flags,
                     uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                     uint32_t stack);
int rec_keep_event(struct rec_keep *k, const struct fmt_event *ev);

/* Every event before ts_ns (trace time) has been given, and the
 * aggregator's cuts up to it made (rec_agg_advance): a quiet program's
 * segments begin on time all the same (the merge's watermark, each round),
 * so that the segments kept hold at most D + S. 0 or -errno, as above. */
int rec_keep_advance(struct rec_keep *k, uint64_t ts_ns);

/* Write what the segment holds so far (the recorder's flush each second),
 * then remove the segments no longer needed to hold D; and at the end
 * finish the segment and remove those. 0 or -errno. */
int rec_keep_flush(struct rec_keep *k);
int rec_keep_finish(struct rec_keep *k);

/* What it did (struct rec_keep_stats, rec_session.h). */
void rec_keep_get_stats(const struct rec_keep *k, struct rec_keep_stats *st);

void rec_keep_free(struct rec_keep *k);

#endif
