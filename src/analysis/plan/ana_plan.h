/* SPDX-License-Identifier: MIT */
/* The planner: one place that decides how a query about a trace is
 * answered. A query (struct ana_query) says what a command asks, the
 * model's options (selection, blocks kept, temporary rule, the
 * per-program view, a fold's retire callbacks), the moment, whether every
 * counter is needed or a moment's live state only, and whether the index
 * or a verified answer is preferred; never how to build it. The planner
 * asks each route in order of cost whether it can answer this trace and
 * this query, runs the first that can, and returns the model with a note
 * for each route it passed over, saying why (docs/planner.md). Whatever the route, the model is the
 * one a single pass gives, number for number, for what the query needs (the unit test test_ana_plan
 * holds every route to it).
 *
 * The routes, cheapest first (each a file ana_route_<name>.c with its ops
 * in ana_plan_internal.h, like the recorder's modes, rec_session.h):
 *   - totals: the whole trace from its chunks' totals (format 1.10, record
 *     --totals), one chunk replayed for the peak's shares; asked by
 *     prefer_index with ANA_NEED_ALL (report --index, timeline --index);
 *   - index: a moment's live state from the chunks' summaries and the
 *     events of one chunk; asked by prefer_index with ANA_NEED_LIVE
 *     (leaks --index);
 *   - ranges: the events replayed on several threads in ranges of chunks
 *     and merged (ana_pmodel.h), where the options allow;
 *   - one pass: the events replayed in order with the caller's reader;
 *     answers every query.
 * A new route is a file, an entry in the table of ana_plan.c at its place
 * in cost, a value of enum ana_route, and a case in test_ana_plan.c.
 *
 * Cost: the planner itself reads the trace's header and chunk table only;
 * what a route costs is its own (above). It never prints: notes and
 * errors go back to the caller, which says them. */
#ifndef ANA_PLAN_H
#define ANA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_scan.h"
#include "analysis/model/ana_model.h"
#include "memscribe/trace.h"

/* The routes, in the order they are asked (cheapest first). */
enum ana_route {
    ANA_ROUTE_TOTALS,
    ANA_ROUTE_INDEX,
    ANA_ROUTE_RANGES,
    ANA_ROUTE_PASS,
    ANA_NR_ROUTES,
};

/* What of the model the query reads. */
enum ana_need {
    /* Every counter: calls, peaks, temporaries, each site's share of the
     * peak (report, tree, flamegraph). */
    ANA_NEED_ALL,
    /* The live state at until_ns only: each site's live bytes and blocks,
     * each image's heap and live blocks, which images were seen (leaks;
     * the rest of the model may count less). */
    ANA_NEED_LIVE,
};

struct ana_query {
    const struct ana_model_options *mo; /* NULL: every event, nothing kept */
    uint64_t until_ns;                  /* the moment (UINT64_MAX: the end) */
    enum ana_need need;
    /* --index: the index's routes (totals, index) are tried before a
     * replay; a refusal of the one the need asks for is a note the caller
     * says (ana_plan.asked). Without it they are passed over. */
    bool prefer_index;
    /* --verify: the replay holds every chunk's summary against its events,
     * and, of the whole trace, a model of the chunks' totals (where they
     * can answer) must equal it; a difference fails the answer
     * (-EBADMSG). */
    bool verify;
    /* enum ana_shares: the peaks whose shares the caller reads (0: every
     * one). The totals route replays the chunks of those only and leaves
     * the others' shares 0 (a build's report by program reads no
     * process's own: a replay of each process's peak chunk saved). */
    unsigned shares;
    /* The most events the totals route may replay for the peaks' shares
     * (their chunks, one after another); past it, it finds it cannot
     * answer. 0: the planner's rule (the trace's events over nr_threads,
     * what each CPU replays of it all in ranges, and at least a million);
     * tests lift it. */
    uint64_t max_replayed;
    unsigned nr_threads;       /* the ranges' at most (0 or 1: no ranges) */
    uint64_t min_range_events; /* the fewest events per range (0: the replay's own) */
    ana_progress_fn *progress; /* while events are replayed; may be NULL */
    void *progress_arg;
};

/* Why a route did not answer. */
struct ana_plan_note {
    enum ana_route route;
    /* The query asked for this route (prefer_index with its need): its
     * refusal is the caller's to say ("--index: WHY; replaying the
     * trace"). Otherwise the note is for a reader of the plan (tests, a
     * page that explains itself). */
    bool asked;
    char why[240];
};

/* A plan: what answered and why not the others. */
struct ana_plan {
    enum ana_route route; /* the route that answered */
    struct ana_plan_note notes[ANA_NR_ROUTES];
    unsigned nr_notes;
    /* The first note with asked set, or NULL. */
    const struct ana_plan_note *asked;
};

/* The route's name: "totals", "index", "ranges", "one pass". */
const char *ana_route_name(enum ana_route route);

/* Answer q about the trace at path, open as r (FMT_OPEN_STACKS_LATER where
 * the options retire images: their stacks are let go as they end): the
 * model *out, finished (the peak's shares resolved, images retired), and
 * *plan (may be NULL). Routes that read with r leave it with no chunk
 * buffers held (its large chunks' buffers would outweigh what the caller
 * writes). Returns 0, or -errno with the reason in err (err_size bytes):
 * -EPROTO or -EIO with the reader's message (a route's own reader's, or
 * r's; empty when only fmt_reader_error(r) knows), -EBADMSG for chunk
 * totals that do not match the events (q->verify: "the chunks' totals do
 * not match the events: ..."), or another -errno from a consumer (the
 * retire callbacks). */
int ana_plan_model(struct fmt_reader *r, const char *path, const struct ana_query *q,
                   struct ana_model **out, struct ana_plan *plan, char *err, size_t err_size);

/* Which route would answer q, with its notes in *plan, without running
 * it: the routes' refusals as ana_plan_model asks them (a route that
 * finds at run time that it cannot answer, as the index on blocks without
 * a stack in a trace of several processes, is not foreseen). */
enum ana_route ana_plan_choose(struct fmt_reader *r, const struct ana_query *q,
                               struct ana_plan *plan);

/* Bounded answers: a series of points over span_ns (a timeline's rows of
 * one process: one at each multiple of the interval, a first and a last)
 * whose interval is interval_ns, the one asked or the caller's default,
 * makes at most max_points points (at least 3; 0: no bound) with the
 * interval returned: interval_ns where it does, else its smallest multiple
 * that does (so rows still fall where the interval asked puts them). A
 * trace being written or of hundreds of millions of events asked at 1 ns
 * so gets the points it asked for, not gigabytes of rows. */
uint64_t ana_plan_interval(uint64_t span_ns, uint64_t interval_ns, uint64_t max_points);

/* How a timeline's rows are answered: ANA_ROUTE_TOTALS, from the chunks'
 * totals at chunk ends (ana_timeline_from_totals: a range, an interval and
 * a bound on the points narrow them there too), when prefer_index asks
 * and the trace, the selection f and the sites followed allow (site_counts:
 * their allocations, which the totals do not hold per stack, not their
 * bytes in use); else ANA_ROUTE_PASS, the rows at every interval from a
 * pass over the events, and *why says why the totals could not when they
 * were asked (else NULL). */
struct ana_filter;
enum ana_route ana_plan_timeline(struct fmt_reader *r, const struct ana_filter *f,
                                 bool prefer_index, bool site_counts, const char **why);

#endif
