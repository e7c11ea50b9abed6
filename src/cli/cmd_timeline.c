/* SPDX-License-Identifier: MIT */
/* memscribe timeline: heap in use, bytes allocated so far, live blocks and
 * RSS over time, one row per interval and process. docs/timeline.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_attach.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_time.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_site_series.h"
#include "analysis/model/ana_timeline.h"
#include "analysis/plan/ana_plan.h"
#include "analysis/plan/ana_plan_fold.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "util/util_duration.h"

enum {
    OPT_INTERVAL = CLI_ANA_OPT_FIRST_OWN,
    OPT_SITES,
    OPT_FROM,
    OPT_TO,
    OPT_INDEX,
    OPT_MAX_POINTS,
    OPT_SITE_COST
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe timeline [options] FILE\n\n"
                 "Use over time, one row per interval: heap in use at the interval's end\n"
                 "(heap) and its maximum inside the interval (heap_max), bytes and blocks\n"
                 "allocated so far (the cumulative total), live blocks, and the latest RSS\n"
                 "sample, committed memory (mapped with access) and reserved memory\n"
                 "(mapped without access; memscribe vmem).\n"
                 "One table per process.\n\n"
                 "options:\n"
                 "  --interval D    row spacing: 10ms, 1s, ... (default: a hundredth of\n"
                 "                  the trace, or of the range)\n"
                 "  --from T, --to T  a range (a zoom): rows at T1, every interval after it,\n"
                 "                  and at T2 (1.5s, 250ms, peak, end, peak-100ms, ...);\n"
                 "                  down to the trace's time unit, single events\n"
                 "  --max-points N  at most N rows per process: a longer interval, a multiple\n"
                 "                  of the one asked (with --index: every k-th chunk's end),\n"
                 "                  where it would make more (a note on stderr says so)\n"
                 "  --sites N       also the bytes in use over time of the N call sites\n"
                 "                  with the most at their process's peak (text, json)\n"
                 "  --site-cost C   what --sites follows: in-use (default), allocations\n"
                 "                  (so far; the sites with the most allocations) or\n"
                 "                  temporary (temporary allocations so far)\n"
                 "  --index         rows at chunk ends from the chunks' totals (format 1.10),\n"
                 "                  not every event: heap, its highest since the row before,\n"
                 "                  allocations, live blocks, RSS (no committed or reserved);\n"
                 "                  --from and --to pick the chunks that hold the range,\n"
                 "                  --interval the ends at least that far apart; a trace\n"
                 "                  without totals, or a selection, is replayed (a note on\n"
                 "                  stderr says why)\n" CLI_ANA_USAGE);
}

/* clang-format off */
#define ROW_COLUMNS                                                                                \
    {"pid", "pid", ANA_CELL_U64},                                                                  \
    {"time", "time", ANA_CELL_STR},                                                                \
    {"time_ns", "time_ns", ANA_CELL_U64},                                                          \
    {"heap", "heap_bytes", ANA_CELL_U64 | ANA_CELL_EST},                                           \
    {"heap_max", "heap_max_bytes", ANA_CELL_U64 | ANA_CELL_EST},                                   \
    {"allocated", "allocated_bytes", ANA_CELL_U64 | ANA_CELL_EST},                                 \
    {"allocations", "allocations", ANA_CELL_U64 | ANA_CELL_EST},                                   \
    {"live_blocks", "live_blocks", ANA_CELL_U64 | ANA_CELL_EST},                                   \
    {"rss", "rss_bytes", ANA_CELL_U64},                                                            \
    {"committed", "committed_bytes", ANA_CELL_U64},                                                \
    {"reserved", "reserved_bytes", ANA_CELL_U64}
/* clang-format on */
static const struct ana_column cols[] = {
    ROW_COLUMNS,
    {"temporary", "temporary", ANA_CELL_U64},
};
/* A sampled trace with counters (format 1.13): its rows' counted figures
 * after the estimated ones, where an exact trace has its temporary. */
static const struct ana_column counted_cols[] = {
    ROW_COLUMNS,
    {"usable", "counted_heap_usable_bytes", ANA_CELL_U64},
    {"allocs_counted", "counted_allocations", ANA_CELL_U64},
    {"temp_counted", "counted_temporary", ANA_CELL_U64},
};
#define NR_COLS (sizeof(cols) / sizeof(cols[0]))

/* The index's rows have no committed or reserved memory and no temporary
 * allocations (the last three); a sampled trace's rows no temporary (the
 * last one: its blocks are not every block, ANA_SAMPLE_NO_TEMPORARY). */
#define NR_INDEX_COLS (NR_COLS - 3)

static void add_row(struct ana_table *t, const struct ana_timeline_row *r, bool index,
                    bool temporary)
{
    char buf[64];

    ana_table_add_row(t);
    ana_table_set_u64(t, 0, r->pid);
    ana_table_set_str(t, 1, ana_time_format(r->t_ns, buf, sizeof(buf)));
    ana_table_set_u64(t, 2, r->t_ns);
    ana_table_set_u64(t, 3, r->heap);
    ana_table_set_u64(t, 4, r->heap_max);
    ana_table_set_u64(t, 5, r->allocated_bytes);
    ana_table_set_u64(t, 6, r->nr_allocs);
    ana_table_set_u64(t, 7, r->live_blocks);
    ana_table_set_u64(t, 8, r->rss);
    if (index)
        return;
    ana_table_set_u64(t, 9, r->committed);
    ana_table_set_u64(t, 10, r->reserved);
    if (temporary)
        ana_table_set_u64(t, 11, r->nr_temporary);
    if (r->has_exact) {
        ana_table_set_u64(t, 11, r->exact_usable);
        ana_table_set_u64(t, 12, r->exact_allocs);
        ana_table_set_u64(t, 13, r->exact_temporary);
    }
}

struct sites {
    uint32_t *stacks, n;
    enum ana_site_cost cost;
    /* top: no sites picked first; the timeline's pass follows every stack
     * and keeps the n first by peak (ana_site_series_subscribe_top) */
    bool top;
    /* the sites' models retire their images' (ana_plan_fold_wanted) */
    bool retire;
    uint32_t nr_stacks;
    struct ana_site_series series;
};

/* The top mode's bound: stacks times moments (at most 32 MiB of values);
 * past it, the sites are picked by a model's pass first. */
#define TOP_MAX_CELLS (4u << 20)

/* A site picked (a copy: its model drops it). */
struct pick {
    struct ana_site s;
    uint32_t stack;
};

/* The n first sites so far by cost, in order, as each image's are handed
 * over. */
struct picks {
    struct cli_ana *a;
    struct pick *v;
    uint32_t nr, n;
    enum ana_site_cost cost;
};

static int by_cost(const struct picks *p, const struct pick *a, const struct pick *b)
{
    return ana_site_order(p->cost, &a->s, a->stack, &b->s, b->stack);
}

/* A site of an image ended: among the first n by cost, its frames kept
 * (the process's stacks go). */
static int pick_site(void *arg, uint32_t stack, const struct ana_site *s)
{
    struct picks *p = arg;
    struct pick c = {*s, stack};
    uint32_t at = p->nr;

    if (!s->nr_allocs || (p->nr == p->n && by_cost(p, &c, &p->v[p->nr - 1]) > 0))
        return 0;
    while (at && by_cost(p, &c, &p->v[at - 1]) < 0)
        at--;
    if (p->nr < p->n)
        p->nr++;
    memmove(p->v + at + 1, p->v + at, (p->nr - 1 - at) * sizeof(*p->v));
    p->v[at] = c;
    return cli_fold_keep_frames(p->a, stack);
}

static int pick_image(void *arg, const struct ana_model *m, uint32_t image)
{
    struct picks *p = arg;
    const struct ana_scope *s = ana_model_image(m, image);
    int rc = ana_model_each_site_of(m, image, pick_site, p);

    if (rc || !s->ended)
        return rc;
    return ana_letgo_image(&p->a->letgo, image, s->end_ns);
}

/* A process --pid or --exe left out ended: its stacks go too. */
static int pick_left_out(void *arg, uint32_t image, uint64_t end_ns)
{
    const struct picks *p = arg;

    return ana_letgo_image(&p->a->letgo, image, end_ns);
}

/* The n sites with the most of the cost (bytes at their process's peak,
 * allocations, temporary allocations): a pass of the
 * model first (the series follows them in the timeline's pass). On a tree
 * each image's sites are weighed at its end and dropped (cli_fold.h).
 * index: from the chunks' totals where the trace allows (timeline --index). */
static void pick_sites(struct cli_ana *a, struct sites *st, uint32_t n, bool index)
{
    struct ana_model_options mo = {.filter = &a->filter};
    struct picks p = {a, calloc((size_t)n + 1, sizeof(*p.v)), 0, n, st->cost};

    if (!p.v)
        cli_die("timeline: out of memory");
    if (st->retire)
        mo.retire = (struct ana_model_retire){pick_image, &p, pick_left_out};
    struct ana_query q = {.mo = &mo, .until_ns = UINT64_MAX, .prefer_index = index};
    struct ana_model *m = cli_ana_answer(a, &q);
    if (st->retire) {
        if (!(st->stacks = malloc((n ? n : 1) * sizeof(*st->stacks))))
            cli_die("timeline: out of memory");
        for (uint32_t k = 0; k < p.nr; k++)
            st->stacks[k] = p.v[k].stack;
        st->n = p.nr;
        free(p.v);
        ana_model_destroy(m);
        return;
    }
    free(p.v);
    uint32_t nr = ana_model_nr_sites(m), k = 0;
    uint32_t *ids = malloc((nr ? nr : 1) * sizeof(*ids));

    if (!ids)
        cli_die("timeline: out of memory");
    for (uint32_t id = 0; id < nr; id++)
        if (ana_model_site(m, id) && ana_model_site(m, id)->nr_allocs)
            ids[k++] = id;
    ana_site_sort(m, st->cost, ids, k);
    st->stacks = ids;
    st->n = k < n ? k : n;
    ana_model_destroy(m);
}

/* --from, --to as times of the trace, the first no later than the second. */
static void pick_range(struct cli_ana *a, struct ana_timeline_range *range,
                       const struct ana_time_point *from, const struct ana_time_point *to)
{
    range->from_ns = cli_ana_time(a, "--from", from);
    range->to_ns = cli_ana_time(a, "--to", to);
    if (range->to_ns < range->from_ns)
        cli_usage_error("timeline: the range ends (%llu ns) before it starts (%llu ns)",
                        (unsigned long long)range->to_ns, (unsigned long long)range->from_ns);
}

/* --max-points N (the query's bound, ana_plan_interval): the range's
 * interval coarsened so that each process's rows are at most N, with a
 * note on stderr when it is. */
static void bound_points(struct cli_ana *a, struct ana_timeline_range *range, uint64_t max_points)
{
    struct fmt_trace_counts c;
    char t1[64], t2[64];

    fmt_reader_counts(a->r, &c);
    uint64_t to = range->to_ns < c.last_ts_ns ? range->to_ns : c.last_ts_ns;
    uint64_t span = to > range->from_ns ? to - range->from_ns : 0;
    uint64_t iv = range->interval_ns ? range->interval_ns : ana_timeline_default_interval(span);
    uint64_t bounded = ana_plan_interval(span, iv, max_points);

    if (!max_points || bounded == iv)
        return;
    cli_warn("timeline: %s: %s %s would make more than %llu rows per process: rows every %s",
             a->path, range->interval_ns ? "--interval" : "the default interval",
             ana_time_format(iv, t1, sizeof(t1)), (unsigned long long)max_points,
             ana_time_format(bounded, t2, sizeof(t2)));
    range->interval_ns = bounded;
}

/* The text output's first lines. */
static void text_head(const struct cli_ana *a, const struct ana_timeline *tl, bool ranged)
{
    char buf[64], t1[64];

    printf("memscribe timeline: %s: ", a->path);
    if (tl->index)
        printf("at chunk ends");
    else
        printf("every %s", ana_time_format(tl->interval_ns, buf, sizeof(buf)));
    if (ranged)
        printf(" from %s to %s", ana_time_format(tl->from_ns, t1, sizeof(t1)),
               ana_time_format(tl->to_ns, buf, sizeof(buf)));
    if (tl->index)
        printf(", from the chunks' totals (no committed or reserved memory)");
    printf("\n");
    if (tl->aggregate_ns)
        printf("(an aggregated trace: interval granularity, rows at its cuts, each with the "
               "blocks of the intervals it ends)\n");
    printf("(rss includes memscribe's own ring buffers, up to 4 MiB per traced thread)\n");
    if (!tl->index && fmt_reader_has_counters(a->r))
        printf("(usable, allocs_counted, temp_counted: every call counted, as the recorder last "
               "wrote them, a round or two (up to ~15 ms) before the row's time; usable is the "
               "heap in use in usable bytes)\n");
}

static int follow_sites(void *arg, struct ana_heap_replay *p, struct ana_model *m,
                        const struct ana_timeline *tl)
{
    struct sites *st = arg;

    int rc;

    if (st->top)
        return ana_site_series_subscribe_top(&st->series, p, m, st->cost, st->nr_stacks, st->n,
                                             TOP_MAX_CELLS, tl);
    if ((rc = ana_site_series_subscribe(&st->series, p, m, st->cost, st->stacks, st->n, tl)))
        return rc;
    /* Only the followed sites are read: the others go at their end. */
    return st->retire
               ? ana_model_set_retire(
                     m, (struct ana_model_retire){.fn = ana_site_series_retire, .arg = &st->series})
               : 0;
}

/* --site-cost's words, each series' key in JSON, and what text says. */
static const char *const cost_names[] = {"in-use", "allocations", "temporary", NULL};
static const char *const cost_key[] = {"bytes", "allocations", "temporary"};
static const char *const cost_what[] = {"bytes in use", "allocations so far",
                                        "temporary allocations so far"};
static const char *const cost_rank[] = {"at their process's peak", "allocations",
                                        "temporary allocations"};

static void sites_json(struct cli_ana *a, struct ana_json *j, const struct sites *st)
{
    const struct ana_site_series *se = &st->series;

    ana_json_kv_str(j, "site_cost", cost_names[se->cost]);

    ana_json_key(j, "site_times_ns");
    ana_json_begin_array(j);
    for (size_t t = 0; t < se->nr_times; t++)
        ana_json_u64(j, se->t_ns[t]);
    ana_json_end_array(j);
    ana_json_key(j, "sites");
    ana_json_begin_array(j);
    for (uint32_t k = 0; k < se->nr_sites; k++) {
        unsigned nr = 0;
        const char *const *fr = cli_ana_stack(a, se->stacks[k], false, 0, &nr);

        ana_json_begin_object(j);
        ana_json_key(j, "stack");
        ana_json_begin_array(j);
        for (unsigned f = 0; f < nr; f++)
            ana_json_str(j, fr[f]);
        ana_json_end_array(j);
        ana_json_kv_u64(j, "interest", a->interest);
        ana_json_key(j, cost_key[se->cost]);
        ana_json_begin_array(j);
        for (size_t t = 0; t < se->nr_times; t++)
            ana_json_u64(j, se->bytes[t * se->nr_sites + k]);
        ana_json_end_array(j);
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
}

static void sites_text(struct cli_ana *a, const struct sites *st)
{
    const struct ana_site_series *se = &st->series;
    char buf[64];

    printf("\ncall sites' %s over time (the %u with the most %s)\n", cost_what[se->cost],
           se->nr_sites, cost_rank[se->cost]);
    for (uint32_t k = 0; k < se->nr_sites; k++) {
        unsigned nr = 0;
        const char *const *fr = cli_ana_stack(a, se->stacks[k], false, 3, &nr);

        printf("  s%u:", k + 1);
        for (unsigned f = 0; f < nr; f++)
            printf("%s %s", f ? " <" : "", fr[f]);
        printf("\n");
    }
    printf("  %12s", "time");
    for (uint32_t k = 0; k < se->nr_sites; k++)
        printf(" %12s", (snprintf(buf, sizeof(buf), "s%u", k + 1), buf));
    printf("\n");
    for (size_t t = 0; t < se->nr_times; t++) {
        printf("  %12s", ana_time_format(se->t_ns[t], buf, sizeof(buf)));
        for (uint32_t k = 0; k < se->nr_sites; k++)
            printf(" %12llu", (unsigned long long)se->bytes[t * se->nr_sites + k]);
        printf("\n");
    }
}

/* The timeline's pass, with n sites (0: none) followed. The whole trace's
 * pass picks its own sites when a row of every stack is small (a storm's
 * few, not a build's millions): no model's pass first. A zoom picks them
 * over the whole trace, before. Returns the pass's 0 or -errno. */
static int compute(struct cli_ana *a, struct ana_timeline *tl,
                   const struct ana_timeline_range *range, uint32_t n, struct sites *st)
{
    struct fmt_trace_counts counts;
    int rc;

    fmt_reader_counts(a->r, &counts);
    st->top = n && range->to_ns == UINT64_MAX && !range->from_ns &&
              counts.nr_stacks < TOP_MAX_CELLS / 1024;
    st->nr_stacks = counts.nr_stacks;
    st->n = n;
    /* A few processes: the model that picks them may replay in parallel. */
    st->retire =
        ana_plan_fold_trace(a->r) && fmt_reader_nr_images(a->r) >= ana_plan_fold_min_images();
    if (n && !st->top)
        pick_sites(a, st, n, false);
    rc = ana_timeline_compute_range(tl, a->r, &a->filter, range, cli_ana_progress, a,
                                    n ? follow_sites : NULL, st);
    if (rc == -EFBIG && st->top) { /* more moments than the bound: pick first */
        ana_site_series_release(&st->series);
        ana_timeline_release(tl);
        st->top = false;
        pick_sites(a, st, n, false);
        rc = ana_timeline_compute_range(tl, a->r, &a->filter, range, cli_ana_progress, a,
                                        follow_sites, st);
    }
    return rc;
}

/* What the index's rows are, when the range or interval asked shaped
 * them: said once on stderr. */
static void index_note(struct cli_ana *a, const struct ana_timeline *tl,
                       const struct ana_timeline_range *range, uint64_t max_points)
{
    if (range->interval_ns)
        cli_warn("timeline: %s: --index: rows at chunk ends, none closer than --interval to the "
                 "row before (the totals hold nothing finer than a chunk)",
                 a->path);
    if (tl->chunk_stride > 1 &&
        (range->interval_ns || range->from_ns || range->to_ns != UINT64_MAX))
        cli_warn("timeline: %s: a row at each of those chunk ends would make more than %llu rows "
                 "per process: rows at every %u of them and the last's",
                 a->path, (unsigned long long)max_points, tl->chunk_stride);
    else if (tl->chunk_stride > 1)
        cli_warn("timeline: %s: a row at each of its %u chunks' ends would make more than %llu "
                 "rows per process: rows at every %u chunks' end and the last's",
                 a->path, fmt_reader_nr_chunks(a->r), (unsigned long long)max_points,
                 tl->chunk_stride);
}

/* The rows, by the route the planner picks (ana_plan_timeline): from the
 * chunks' totals with index (timeline --index) where the trace allows (a
 * note says why not), at chunk ends within the range, at least the
 * interval asked apart; else the timeline's pass. Either bounded to
 * max_points rows per process (0: no bound), with a note when that
 * coarsens them. */
static int rows(struct cli_ana *a, struct ana_timeline *tl, struct ana_timeline_range *range,
                uint32_t n, struct sites *st, bool index, uint64_t max_points)
{
    const char *no;
    int rc;

    if (ana_plan_timeline(a->r, &a->filter, index, n && st->cost != ANA_SITE_IN_USE, &no) !=
        ANA_ROUTE_TOTALS) {
        if (no)
            cli_warn("timeline: --index: %s; replaying the trace", no);
        bound_points(a, range, max_points);
        return compute(a, tl, range, n, st);
    }
    if (n) /* the sites picked from the totals' model too */
        pick_sites(a, st, n, true);
    rc = ana_timeline_from_totals(tl, a->r, range, st->stacks, n ? st->n : 0,
                                  n ? &st->series : NULL, max_points);
    if (rc == -EPROTO)
        cli_die("timeline: %s", fmt_reader_error(a->r));
    if (!rc)
        index_note(a, tl, range, max_points);
    return rc;
}

/* The rows' errors end the command; an aggregated trace's interval
 * moved is said. */
static void check_rows(struct cli_ana *a, const struct ana_timeline *tl, int rc, uint64_t interval)
{
    cli_ana_progress_done(a);
    if (rc == -ERANGE)
        cli_die("timeline: %s: --from is after the trace's last event", a->path);
    if (rc == -E2BIG)
        cli_usage_error("timeline: --interval is too small for this trace (more than %u rows)",
                        ANA_TIMELINE_MAX_ROWS);
    if (rc == -EOVERFLOW) /* not the interval's fault: it may not have been given */
        cli_die("timeline: %s: %u processes over %llu intervals would make %llu rows, more than "
                "%u; choose processes with --pid%s",
                a->path, tl->nr_images, (unsigned long long)tl->nr_intervals,
                (unsigned long long)tl->nr_rows_needed, ANA_TIMELINE_MAX_ROWS,
                interval ? " or a longer --interval" : "");
    if (rc)
        cli_ana_fail(a, rc);
    if (tl->asked_ns && tl->asked_ns != tl->interval_ns) {
        char t1[64], t2[64], t3[64];
        cli_warn("timeline: %s: --interval %s is not a multiple of the aggregated trace's "
                 "intervals (%s): rows every %s",
                 a->path, ana_time_format(tl->asked_ns, t1, sizeof(t1)),
                 ana_time_format(tl->aggregate_ns, t2, sizeof(t2)),
                 ana_time_format(tl->interval_ns, t3, sizeof(t3)));
    }
}

/* The rows, one table per process, in the format asked; then the sites. */
static void write_rows(struct cli_ana *a, const struct ana_timeline *tl, bool ranged,
                       const struct sites *st, unsigned long nr_sites)
{
    /* Rows come time-major; group them by image for sections. */
    uint32_t nr_images = 0;
    for (size_t i = 0; i < tl->nr_rows; i++)
        if (tl->rows[i].image + 1 > nr_images)
            nr_images = tl->rows[i].image + 1;
    char name[256];
    struct ana_json j;
    bool csv_header_done = false;
    bool temporary = ana_sample_has_temporary(fmt_reader_sample_bytes(a->r));
    if (a->format == CLI_FMT_JSON) {
        cli_ana_json_begin(a, &j);
        ana_json_kv_u64(&j, "interval_ns", tl->interval_ns);
        if (tl->index) {
            ana_json_kv_bool(&j, "index", true);
            ana_json_kv_u64(&j, "chunk_stride", tl->chunk_stride);
        }
        if (ranged) {
            ana_json_kv_u64(&j, "from_ns", tl->from_ns);
            ana_json_kv_u64(&j, "to_ns", tl->to_ns);
        }
        ana_json_key(&j, "processes");
        ana_json_begin_array(&j);
    } else if (a->format == CLI_FMT_TEXT) {
        text_head(a, tl, ranged);
    }
    for (uint32_t im = 0; im < nr_images; im++) {
        struct ana_table *t;
        bool counted = !tl->index && fmt_reader_has_counters(a->r);
        if (counted ? ana_table_create(&t, counted_cols, NR_COLS + 2)
                    : ana_table_create(&t, cols,
                                       tl->index   ? NR_INDEX_COLS
                                       : temporary ? NR_COLS
                                                   : NR_COLS - 1))
            cli_die("timeline: out of memory");
        for (size_t i = 0; i < tl->nr_rows; i++)
            if (tl->rows[i].image == im)
                add_row(t, &tl->rows[i], tl->index, temporary);
        if (!ana_table_nr_rows(t)) {
            ana_table_destroy(t);
            continue;
        }
        if (a->format == CLI_FMT_JSON) {
            ana_json_begin_object(&j);
            cli_ana_image_json(a, &j, im);
            ana_json_key(&j, "rows");
            ana_table_write_json(t, &j);
            ana_json_end_object(&j);
        } else if (a->format == CLI_FMT_CSV) {
            cli_ana_table(a, t, stdout, "", !csv_header_done);
            csv_header_done = true;
        } else {
            cli_ana_image_name(a, im, name, sizeof(name));
            printf("\n%s\n", name);
            cli_ana_table(a, t, stdout, "  ", true);
            if (!tl->index && !tl->vm_precise && ana_timeline_committed_flat(tl, im))
                printf("  (committed does not change: recorded without --vm-precise, only the\n"
                       "  program's own mmap calls and the mappings at its start are seen, not\n"
                       "  malloc's arenas and large blocks, thread stacks or libraries loaded\n"
                       "  later; record with --vm-precise to follow them)\n");
        }
        ana_table_destroy(t);
    }
    if (a->format == CLI_FMT_JSON) {
        ana_json_end_array(&j);
        if (nr_sites)
            sites_json(a, &j, st);
        ana_json_end_object(&j);
        if (ana_json_finish(&j))
            cli_die("timeline: writing the output failed");
    }
    if (nr_sites && a->format == CLI_FMT_TEXT)
        sites_text(a, st);
}

int cmd_timeline(int argc, char **argv)
{
    static const struct option own[] = {
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"sites", required_argument, NULL, OPT_SITES},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"index", no_argument, NULL, OPT_INDEX},
        {"max-points", required_argument, NULL, OPT_MAX_POINTS},
        {"site-cost", required_argument, NULL, OPT_SITE_COST},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_ANALYSIS | CLI_JSON_NOTES, .own = own, .usage = usage};
    struct cli_ana a;
    uint64_t interval = 0;
    /* --from, --to: a zoom (the whole trace by default) */
    struct ana_time_point from = {.base = ANA_TIME_START}, to = {.base = ANA_TIME_END};
    bool ranged = false, index = false;
    unsigned long nr_sites = 0, max_points = 0;
    struct sites st = {0};
    int c, rc;

    cli_ana_init(&a, "timeline", 0);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_INTERVAL:
            if (util_duration_parse(optarg, &interval) || !interval)
                cli_usage_error("timeline: --interval wants a duration like 10ms or 1s, not '%s'",
                                optarg);
            break;
        case OPT_SITES:
            nr_sites = cli_ana_number(&a, "--sites", optarg);
            break;
        case OPT_FROM:
        case OPT_TO:
            if (ana_time_parse_point(optarg, c == OPT_FROM ? &from : &to))
                cli_usage_error("timeline: --%s wants a time like 1.5s, 250ms, peak or end, not "
                                "'%s'",
                                c == OPT_FROM ? "from" : "to", optarg);
            ranged = true;
            break;
        case OPT_INDEX:
            index = true;
            break;
        case OPT_MAX_POINTS:
            max_points = cli_ana_number(&a, "--max-points", optarg);
            break;
        case OPT_SITE_COST:
            st.cost = (enum ana_site_cost)cli_ana_choice(&a, "site-cost", optarg, cost_names);
            break;
        }
    }
    /* Without --sites no stack is read: none is decoded (a build's are
     * millions); with them, a tree's processes' go as they end. */
    a.stacks_later = !nr_sites || ana_plan_fold_wanted();
    cli_ana_open(&a, argc, argv, optind);
    if (nr_sites && a.format == CLI_FMT_CSV)
        cli_usage_error("timeline: --sites goes with text or json, not csv");
    if (nr_sites && st.cost == ANA_SITE_TEMPORARY)
        cli_ana_want_temporary(&a, "--site-cost temporary");

    struct ana_timeline tl;
    struct ana_timeline_range range = {interval, 0, UINT64_MAX};
    if (ranged)
        pick_range(&a, &range, &from, &to);
    rc = rows(&a, &tl, &range, (uint32_t)(nr_sites > 1000 ? 1000 : nr_sites), &st, index,
              max_points);
    check_rows(&a, &tl, rc, interval);
    write_rows(&a, &tl, ranged, &st, nr_sites);
    ana_site_series_release(&st.series);
    free(st.stacks);
    ana_timeline_release(&tl);
    return cli_ana_close(&a);
}
