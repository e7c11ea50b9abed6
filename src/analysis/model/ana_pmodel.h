/* SPDX-License-Identifier: MIT */
/* The heap model of a whole trace file computed on several threads: the
 * chunks are cut into contiguous ranges, each replayed by its own reader
 * into a partial model (deltas from the range's start), and the partials
 * are merged in order into exactly the model one pass would give (peak and
 * when, each stack's share of the peak, temporary allocations across range
 * edges, RSS). Decoding is most of a report's time; this spreads it.
 * With the index's model of a moment and the totals' model of the whole
 * trace beside it, these are the planner's strategies (ana_plan.h picks
 * one); a command never calls them. ana_pmodel.c (ranges and their merge)
 * calls neither of the others; they call its merge. */
#ifndef ANA_PMODEL_H
#define ANA_PMODEL_H

#include <stdint.h>

#include "analysis/core/ana_scan.h"
#include "analysis/model/ana_model.h"

/* Can these options be computed in ranges? Not when each block must be
 * kept or the loose temporary rule looks back over blocks, nor with a thread
 * filter (a block's thread is learned where it was allocated). */
bool ana_pmodel_supported(const struct ana_model_options *opt);

struct ana_pmodel_options {
    unsigned nr_threads;       /* at most this many ranges (and threads) */
    uint64_t until_ns;         /* stop after this time (UINT64_MAX: the end) */
    uint64_t min_range_events; /* fewer per range is not worth a thread (0: 200000) */
    ana_progress_fn *progress; /* called by the first range's thread only */
    void *progress_arg;
    /* Each range's reader also holds its chunks' summaries against their
     * events (fmt_reader_verify_summaries): a whole trace's pass checks the
     * index a later from_index build trusts. */
    bool verify;
};

/* Why the index cannot answer for this trace and these options, or NULL
 * (a build may still meet blocks without a stack in a trace of several
 * processes): every block kept (leaks --all, classes), or the trace's
 * reasons (ana_index_refusal). */
const char *ana_pmodel_index_refusal(struct fmt_reader *r, const struct ana_model_options *opt);

/* Why the chunk totals cannot answer for this trace and these options, or
 * NULL: no totals (a trace before format 1.10), options that keep every
 * block or a selection, the index's reasons (ana_index_refusal), several
 * processes (merged from the events, as the parallel replay does). */
const char *ana_pmodel_totals_refusal(struct fmt_reader *r, const struct ana_model_options *opt);

/* Build *out (finished: peak contributions resolved) from the events of
 * the trace at path, in ranges. Returns 0, -ENOTSUP (options not
 * supported), or -errno; a reader error message goes to err. */
int ana_pmodel_build(struct ana_model **out, const char *path, const struct ana_model_options *opt,
                     const struct ana_pmodel_options *po, char *err, size_t err_size);

/* The model of the moment until_ns from the index (ana_pmodel_index.c;
 * ana_pmodel_index_refusal must have said NULL): until_ns's live state from
 * the chunk summaries before the chunk that reaches it, and that chunk's
 * events up to it; the chunks before are not decoded and the summaries are
 * taken on trust (dump --verify checks them). Only the live state is the
 * trace's (each site's live bytes and blocks, each image's and the
 * total's heap and live blocks, which images were seen): calls,
 * allocations, peaks and temporary count one chunk. r is the caller's,
 * opened on path (FMT_OPEN_STACKS_LATER where the options retire images:
 * the retire callback reads its stacks and lets them go, and the build
 * decodes none). Returns 0, -ENOTSUP (blocks without a stack in a trace
 * of several processes; why in err) or -errno. */
int ana_pmodel_index_build(struct ana_model **out, struct fmt_reader *r, const char *path,
                           const struct ana_model_options *opt, uint64_t until_ns, char *err,
                           size_t err_size);

/* The whole trace's model from its chunks' totals (ana_pmodel_totals.c,
 * format 1.10, TOTALS; ana_pmodel_totals_refusal must have said NULL): the
 * chunks' totals merged, and the chunk where the trace peaks replayed for
 * its stacks' shares of the peak; the totals are taken on trust as the
 * index's summaries are (report --verify holds them against the events).
 * Of a trace of several processes, only the shares asked (enum
 * ana_shares) are found: the others are 0; and where the chunks those need
 * replayed hold more than max_replayed events (UINT64_MAX: no bound), it
 * returns -ENOTSUP with why in err (a replay of the whole trace is then
 * cheaper).
 * r is the caller's, opened on path. Returns 0, -EPROTO (corrupt totals,
 * or totals that disagree with the peak chunk's events; why in err),
 * -ENOTSUP (why in err) or -errno. */
int ana_pmodel_totals_build(struct ana_model **out, struct fmt_reader *r, const char *path,
                            const struct ana_model_options *opt, unsigned shares,
                            uint64_t max_replayed, char *err, size_t err_size);

#endif
