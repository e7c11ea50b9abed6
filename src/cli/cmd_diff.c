/* SPDX-License-Identifier: MIT */
/* memscribe diff: what changed between two runs (or two windows of one),
 * call site by call site, sites matched by their symbolized function
 * chain. docs/diff.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_segment.h"
#include "analysis/core/ana_stacks.h"
#include "analysis/core/ana_time.h"
#include "analysis/diff/ana_diff.h"
#include "analysis/diff/ana_diff_site.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_reach.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_diff.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"

enum {
    OPT_BASE_FROM = CLI_ANA_OPT_FIRST_OWN,
    OPT_BASE_TO,
    OPT_FROM,
    OPT_TO,
    OPT_SORT,
    OPT_LINES,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe diff [options] BASE NEW\n\n"
                 "What changed from trace BASE to trace NEW, per call site and in total:\n"
                 "allocations, bytes allocated, peak contribution, leaked bytes and temporary\n"
                 "allocations (and bytes lost at exit where a side has leak classes: record\n"
                 "--reach), each as base, new and change. Sites are matched by their\n"
                 "symbolized function chain, not addresses, so two builds compare; a line that\n"
                 "moved is not a change (--lines matches function, file and line instead).\n\n"
                 "options:\n"
                 "  --sort M          order sites by the largest change of M: allocations,\n"
                 "                    bytes, peak (default), leaked, temporary or lost\n"
                 "  --top N           the first N sites (default 20, 0: all)\n"
                 "  --lines           match sites by function, file and line\n"
                 "  --base-from T, --base-to T\n"
                 "                    a window of BASE (1.5s, 250ms, peak, end, peak-100ms, ...)\n"
                 "  --from T, --to T  a window of NEW; pass one file twice to compare two\n"
                 "                    moments of one run. In a window only the blocks allocated\n"
                 "                    in it count: leaked is what of them is live at its end,\n"
                 "                    peak their live bytes when they peaked together\n"
                 "  --format=F        text (default), json or csv\n"
                 "  -h, --help        this text\n" CLI_ANA_FRAMES_USAGE CLI_SYM_USAGE);
}

struct side {
    struct cli_ana a;
    struct ana_time_point from, to;
    const char *from_opt, *to_opt; /* "--base-from", ... for messages */
    uint64_t t0, t1;
    struct ana_model *m;
    /* Leak classes at exit (record --reach), for a window that ends at the
     * trace's end: classes set, and the blocks' classes by site. */
    bool classes;
    struct ana_reach reach;
};

struct window_feed {
    struct ana_heap_replay replay;
    uint64_t t0;
};

/* The window's events only: its replay knows nothing before t0 (blocks
 * freed in it that were allocated before are no temporary ones, and its
 * heap in use starts at 0). In an aggregated trace t0 is a cut
 * (cli_ana_cut): the batch rows at t0 are of the interval before it, and
 * the replay is told the trace is aggregated by its FMT_EV_AGGREGATE
 * whenever that came. */
static int feed(void *arg, const struct fmt_event *ev)
{
    struct window_feed *w = arg;

    if ((ev->ts_ns < w->t0 || (ev->ts_ns == w->t0 && w->t0 && ev->kind == FMT_EV_HEAP_BATCH)) &&
        ev->kind != FMT_EV_AGGREGATE)
        return 0;
    return ana_heap_replay_event(&w->replay, ev);
}

/* The model of the blocks allocated in [t0, t1]; keep_blocks: it keeps
 * those live at t1, for their leak classes. */
static struct ana_model *window_model(struct cli_ana *a, uint64_t t0, uint64_t t1, bool keep_blocks,
                                      int lines)
{
    struct window_feed w = {.t0 = t0};
    struct ana_model_options mo = {.keep_blocks = keep_blocks};
    struct ana_model *m;
    int rc;

    /* On a tree the sites are folded by what they are matched on as each
     * process ends (cli_fold.h). */
    cli_ana_programs(a, &mo);
    a->fold_alone = true; /* its rows are by key alone */
    bool fold = cli_fold_setup(a, &mo, lines ? CLI_FOLD_PLACES : CLI_FOLD_FLAME);

    if ((rc = ana_model_create(&m, &mo)))
        cli_ana_fail(a, rc);
    ana_heap_replay_init(&w.replay, NULL);
    if ((rc = ana_model_subscribe(m, &w.replay)))
        cli_ana_fail(a, rc);
    cli_ana_scan(a, t1, feed, &w);
    if ((rc = ana_heap_replay_finish(&w.replay)))
        cli_ana_fail(a, rc);
    ana_heap_replay_release(&w.replay);
    if (fold)
        ana_fold_finish(a->fold, m);
    return m;
}

static void side_open(struct side *s, const char *path, int lines)
{
    char *argv[] = {(char *)path, NULL};

    s->a.stacks_later = true; /* a tree's processes' go as they end */
    cli_ana_open(&s->a, 1, argv, 0);
    s->t0 = cli_ana_cut(&s->a, s->from_opt, cli_ana_time(&s->a, s->from_opt, &s->from), false);
    s->t1 = cli_ana_cut(&s->a, s->to_opt, cli_ana_time(&s->a, s->to_opt, &s->to), true);
    if (s->t1 < s->t0)
        cli_usage_error("diff: %s: the window ends (%" PRIu64 " ns) before it starts (%" PRIu64
                        " ns)",
                        path, s->t1, s->t0);
    /* The classes are of the blocks live at the end, as leaks reads them. */
    s->classes = ana_reach_present(s->a.r) && s->to.base == ANA_TIME_END && !s->to.offset_ns;
    s->m = window_model(&s->a, s->t0, s->t1, s->classes, lines);
    int rc;
    if (s->classes && (rc = ana_reach_build(&s->reach, s->a.r, s->m)))
        cli_ana_fail(&s->a, rc);
}

/* A side's sites (or the rows its fold made of them) into d. */
static void add_side(struct side *s, struct ana_diff *d, enum ana_diff_side which, int lines)
{
    if (s->a.fold)
        cli_diff_add_fold(&s->a, s->a.fold, d, which, lines);
    else
        cli_diff_add_sites(&s->a, s->m, d, which, lines, NULL, s->classes ? &s->reach : NULL);
}

/* Columns of every metric at most, and the site. */
#define MAX_COLS (3 * ANA_DIFF_NR_SHOWN + 1)

/* What the table shows: the first nr metrics (lost only where a side has
 * leak classes), and which side has each (a sampled trace no temporary
 * figures, a trace without classes no lost bytes): where a side has not,
 * its cell and the change are empty (null in JSON). */
struct shown {
    unsigned nr;
    bool known[2][ANA_DIFF_NR_METRICS];
};

static void make_columns(struct ana_column *cols, char titles[][24], char keys[][24],
                         const struct shown *sh)
{
    static const char *const shortname[ANA_DIFF_NR_SHOWN] = {"allocs", "bytes", "peak",
                                                             "leaked", "temp",  "lost"};
    static const char *const part[3] = {"base", "new", "change"};

    for (unsigned m = 0; m < sh->nr; m++) {
        for (unsigned p = 0; p < 3; p++) {
            unsigned c = 3 * m + p;

            snprintf(titles[c], 24, "%s %s", shortname[m], p == 2 ? "+/-" : part[p]);
            snprintf(keys[c], 24, "%s_%s", ana_diff_metric_key((enum ana_diff_metric)m), part[p]);
            cols[c] = (struct ana_column){titles[c], keys[c], p == 2 ? ANA_CELL_I64 : ANA_CELL_U64};
        }
    }
    cols[3 * sh->nr] = (struct ana_column){"site", "site", ANA_CELL_LIST | ANA_CELL_INTEREST};
}

/* A row: the values and the site's frames (key: leaf first, one per line),
 * at most frames of them (0: all), a cut site ending in "... N more" as in
 * every command that prints stacks. */
static void add_row(struct side *nw, struct side *base, struct ana_table *t,
                    const uint64_t v[2][ANA_DIFF_NR_METRICS], const char *key, unsigned frames,
                    const struct shown *sh)
{
    if (ana_table_add_row(t))
        cli_die("diff: out of memory");
    for (unsigned m = 0; m < sh->nr; m++) {
        ana_table_set_u64(t, 3 * m, v[0][m]);
        ana_table_set_u64(t, 3 * m + 1, v[1][m]);
        ana_table_set_i64(t, 3 * m + 2, (int64_t)(v[1][m] - v[0][m]));
        for (unsigned p = 0; p < 2; p++)
            if (!sh->known[p][m]) {
                ana_table_set_none(t, 3 * m + p);
                ana_table_set_none(t, 3 * m + 2);
            }
    }
    cli_diff_set_site(&nw->a, &base->a, t, 3 * sh->nr, key, frames);
}

/* The totals in JSON: each metric shown, null where a side has none. */
static void total_json(struct ana_json *j, const struct ana_diff *d, char keys[][24],
                       const struct shown *sh)
{
    ana_json_key(j, "total");
    ana_json_begin_object(j);
    for (unsigned k = 0; k < sh->nr; k++) {
        bool t0 = sh->known[0][k], t1 = sh->known[1][k];
        ana_json_kv_u64_or_null(j, keys[3 * k], t0, d->total[0][k]);
        ana_json_kv_u64_or_null(j, keys[3 * k + 1], t1, d->total[1][k]);
        ana_json_key(j, keys[3 * k + 2]);
        if (t0 && t1)
            ana_json_i64(j, (int64_t)(d->total[1][k] - d->total[0][k]));
        else
            ana_json_null(j);
    }
    ana_json_end_object(j);
}

static void side_json(struct ana_json *j, const char *name, const struct side *s)
{
    ana_json_key(j, name);
    ana_json_begin_object(j);
    ana_json_kv_str(j, "trace", s->a.path);
    ana_json_kv_u64(j, "from_ns", s->t0);
    ana_json_kv_u64(j, "to_ns", s->t1);
    ana_aggregate_json(j, fmt_reader_info(s->a.r));
    ana_segment_json(j, fmt_reader_info(s->a.r));
    ana_json_end_object(j);
}

/* The columns both sides can fill, and the sort they allow (usage errors
 * exit). */
static struct shown shown_of(struct side *base, struct side *nw, enum ana_diff_metric sort)
{
    /* Whether each side has temporary figures (a sampled trace has none,
     * ana_sample.h) and leak classes: nothing to sort by, and empty cells,
     * where not; the lost bytes are shown where a side has classes. */
    struct shown sh = {.nr = base->classes || nw->classes ? ANA_DIFF_NR_SHOWN : ANA_DIFF_LOST};
    for (unsigned p = 0; p < 2; p++) {
        const struct side *s = p ? nw : base;
        for (unsigned k = 0; k < ANA_DIFF_NR_METRICS; k++)
            sh.known[p][k] = true;
        sh.known[p][ANA_DIFF_TEMPORARY] = ana_sample_has_temporary(fmt_reader_sample_bytes(s->a.r));
        sh.known[p][ANA_DIFF_LOST] = s->classes;
    }
    if (sort == ANA_DIFF_TEMPORARY) {
        cli_ana_want_temporary(&base->a, "--sort temporary");
        cli_ana_want_temporary(&nw->a, "--sort temporary");
    }
    if (sort == ANA_DIFF_LOST && !(base->classes && nw->classes))
        cli_usage_error("diff: --sort lost needs leak classes at the end of both traces (record "
                        "--reach; not with --to or --base-to)");
    return sh;
}

/* The table t of d's rows, and the sides' ranges and the totals, in the
 * format asked. */
static void write_diff(const struct side *base, struct side *nw, const struct ana_diff *d,
                       const struct ana_table *t, char keys[][24], const struct shown *sh,
                       int lines, enum ana_diff_metric sort)
{
    if (nw->a.format == CLI_FMT_JSON) {
        struct ana_json j;

        ana_json_init(&j, stdout, true);
        ana_json_begin_object(&j);
        side_json(&j, "base", base);
        side_json(&j, "new", nw);
        ana_json_kv_str(&j, "match", lines ? "line" : "function");
        ana_json_kv_str(&j, "sort", ana_diff_metric_name(sort));
        ana_json_kv_u64(&j, "sites", d->nr_rows);
        total_json(&j, d, keys, sh);
        ana_json_key(&j, "rows");
        ana_table_write_json(t, &j);
        ana_json_end_object(&j);
        if (ana_json_finish(&j))
            cli_die("diff: writing JSON failed");
    } else {
        if (nw->a.format == CLI_FMT_TEXT) {
            char a0[32], a1[32], b0[32], b1[32];

            printf("memscribe diff: base %s [%s, %s], new %s [%s, %s]\n", base->a.path,
                   ana_time_format(base->t0, a0, sizeof(a0)),
                   ana_time_format(base->t1, a1, sizeof(a1)), nw->a.path,
                   ana_time_format(nw->t0, b0, sizeof(b0)),
                   ana_time_format(nw->t1, b1, sizeof(b1)));
            printf("%zu sites matched by %s, sorted by the change of %s; the first row is the "
                   "total\n\n",
                   d->nr_rows, lines ? "function, file and line" : "function chain",
                   ana_diff_metric_name(sort));
        }
        cli_ana_table(&nw->a, t, stdout, "", true);
    }
}

int cmd_diff(int argc, char **argv)
{
    static const struct option own[] = {
        {"base-from", required_argument, NULL, OPT_BASE_FROM},
        {"base-to", required_argument, NULL, OPT_BASE_TO},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"sort", required_argument, NULL, OPT_SORT},
        {"lines", no_argument, NULL, OPT_LINES},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes =
                               CLI_TAKES_FORMAT | CLI_TAKES_TOP | CLI_TAKES_SYM | CLI_TAKES_FRAMES,
                           .own = own,
                           .usage = usage};
    struct side base = {0}, nw = {0};
    struct ana_point_opt {
        struct ana_time_point *p;
        const char *name;
    } points[4] = {
        {&base.from, "base-from"}, {&base.to, "base-to"}, {&nw.from, "from"}, {&nw.to, "to"}};
    struct ana_column cols[MAX_COLS];
    char titles[MAX_COLS][24], keys[MAX_COLS][24];
    enum ana_diff_metric sort = ANA_DIFF_PEAK;
    struct ana_diff d;
    struct ana_table *t;
    int c, lines = 0, m;

    cli_ana_init(&nw.a, "diff", 20);
    cli_ana_init(&base.a, "diff", 20);
    base.from = nw.from = (struct ana_time_point){.base = ANA_TIME_START};
    base.to = nw.to = (struct ana_time_point){.base = ANA_TIME_END};
    base.from_opt = "--base-from";
    base.to_opt = "--base-to";
    nw.from_opt = "--from";
    nw.to_opt = "--to";
    while ((c = cli_getopt(&g, &nw.a, argc, argv)) != -1) {
        switch (c) {
        case OPT_BASE_FROM:
        case OPT_BASE_TO:
        case OPT_FROM:
        case OPT_TO: {
            struct ana_point_opt *po = &points[c - OPT_BASE_FROM];

            if (ana_time_parse_point(optarg, po->p))
                cli_usage_error("diff: --%s '%s' is not a time (1.5s, 250ms, peak, end-1s, ...)",
                                po->name, optarg);
            break;
        }
        case OPT_SORT:
            if ((m = ana_diff_metric_parse(optarg)) < 0)
                cli_usage_error("diff: unknown --sort '%s' (allocations, bytes, peak, leaked, "
                                "temporary)",
                                optarg);
            sort = (enum ana_diff_metric)m;
            break;
        case OPT_LINES:
            lines = 1;
            break;
        }
    }
    if (argc - optind != 2)
        cli_usage_error("diff: give two traces, BASE and NEW; see 'memscribe diff --help'");
    base.a.sym = nw.a.sym;
    base.a.format = nw.a.format;
    side_open(&base, argv[optind], lines);
    side_open(&nw, argv[optind + 1], lines);
    struct shown sh = shown_of(&base, &nw, sort);

    ana_diff_init(&d);
    add_side(&base, &d, ANA_DIFF_BASE, lines);
    add_side(&nw, &d, ANA_DIFF_NEW, lines);
    ana_diff_finish(&d);
    ana_diff_sort(&d, sort);

    /* Sites are matched on all their frames; --frames only cuts what is
     * shown (all by default). */
    unsigned frames = nw.a.frames_set ? nw.a.frames : 0;
    make_columns(cols, titles, keys, &sh);
    if (ana_table_create(&t, cols, 3 * sh.nr + 1))
        cli_die("diff: out of memory");
    if (nw.a.format != CLI_FMT_JSON)
        add_row(&nw, &base, t, d.total, "(total)", frames, &sh);
    size_t shown = nw.a.top && nw.a.top < d.nr_rows ? nw.a.top : d.nr_rows;
    for (size_t i = 0; i < shown; i++)
        add_row(&nw, &base, t, (const uint64_t(*)[ANA_DIFF_NR_METRICS])d.rows[i].v, d.rows[i].key,
                frames, &sh);

    write_diff(&base, &nw, &d, t, keys, &sh, lines, sort);
    ana_table_destroy(t);
    ana_diff_release(&d);
    ana_reach_release(&base.reach);
    ana_reach_release(&nw.reach);
    ana_model_destroy(base.m);
    ana_model_destroy(nw.m);
    cli_ana_close(&base.a);
    return cli_ana_close(&nw.a);
}
