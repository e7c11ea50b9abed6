/* SPDX-License-Identifier: MIT */
/* memscribe check: a memory gate for CI. A trace's unsuppressed leaked
 * bytes and blocks (cli_view_leaks: report's unsuppressed_* fields), peak
 * heap, temporary allocations, allocations, peak RSS and leak classes,
 * each held against a limit, or against a base trace's (growth, with the
 * sites that grew); text, JSON and JUnit XML; exit 0 when every check
 * passes, 1 when one fails. docs/check.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_sample.h"
#include "analysis/diff/ana_check.h"
#include "analysis/model/ana_exact.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_reach.h"
#include "analysis/pictures/ana_svg.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_diff.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"
#include "cli/cli_view.h"

#define MAX_CHECKS 64

enum {
    OPT_BASE = CLI_ANA_OPT_FIRST_OWN,
    OPT_MAX_GROWTH,
    OPT_JUNIT,
    OPT_MAX, /* --max-<measure>: OPT_MAX + the measure */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: memscribe check [checks] [options] TRACE\n\n"
            "A memory gate for CI: each check holds one number of the trace against a\n"
            "limit and passes or fails; exit status 0 when all pass, 1 when one fails\n"
            "(or the trace cannot be read), 2 for a usage error.\n\n"
            "checks (at least one; sizes as 0, 4096, 64K, 2M, 1G), each the field of\n"
            "report --format=json's \"total\" named after it:\n"
            "  --max-leaked SIZE        unsuppressed leaked bytes: live at the end, less\n"
            "                           what suppressions list apart (report's\n"
            "                           unsuppressed_leaked_bytes); on a trace with leak\n"
            "                           classes it counts still-reachable bytes too\n"
            "  --max-leaked-blocks N    unsuppressed leaked blocks (unsuppressed_leaked_blocks)\n"
            "  --max-peak SIZE          peak heap in use (peak_bytes)\n"
            "  --max-temporary N        temporary allocations (temporary; a sampled trace's\n"
            "                           counted ones, exact.temporary)\n"
            "  --max-allocations N      heap blocks allocated (allocations; a sampled\n"
            "                           trace's counted ones, exact.allocations)\n"
            "  --max-peak-rss SIZE      largest RSS sample, with memscribe's ring buffers\n"
            "                           (peak_rss_bytes)\n"
            "  --max-definitely-lost SIZE  unsuppressed bytes definitely lost at exit\n"
            "                           (record --reach; unsuppressed_definitely_lost_bytes)\n"
            "  --max-lost SIZE          unsuppressed bytes definitely and indirectly lost\n"
            "                           (record --reach; unsuppressed_lost_bytes)\n"
            "  --max-lost-blocks N      unsuppressed blocks definitely and indirectly lost\n"
            "                           (record --reach; unsuppressed_lost_blocks): what to\n"
            "                           gate on a trace with classes, not leaked-blocks\n"
            "  --max-possibly-lost SIZE unsuppressed bytes possibly lost at exit\n"
            "                           (record --reach; unsuppressed_possibly_lost_bytes)\n"
            "  --base OLD.mscr --max-growth M=LIMIT[,M=LIMIT...]\n"
            "                           growth against a base trace: M is any check's\n"
            "                           name above (leaked, leaked-blocks, peak,\n"
            "                           temporary, allocations, peak-rss, definitely-lost,\n"
            "                           lost, lost-blocks, possibly-lost); LIMIT a size or\n"
            "                           count (0: no growth) or a percentage of the base\n"
            "                           (5%%, 2.5%%). A failed one lists the sites that grew\n"
            "                           in its measure (all but peak-rss, not by site)\n\n"
            "options:\n"
            "  --junit FILE    also write the checks as JUnit XML, a testcase each\n"
            "  --top N         leaking stacks (or sites that grew) shown when a leak\n"
            "                  check fails (default 5; 0: all)\n" CLI_ANA_USAGE CLI_ANA_FRAMES_USAGE
                CLI_ANA_SUPP_USAGE
            "\nThe numbers are the selected processes' total, as report's \"all processes\"\n"
            "(docs/check.md).\n");
}

struct check {
    struct cli_ana a;
    FILE *out;             /* text and JSON: stdout, or stderr under record --check */
    const char *base_path; /* --base */
    const char *junit;     /* --junit */
    struct ana_check_limit lim[MAX_CHECKS];
    char name[MAX_CHECKS][96]; /* as given: "max-leaked 0", "max-growth peak=5%" */
    struct ana_check_result res[MAX_CHECKS];
    size_t nr;
    unsigned nr_failed;
    bool leak_failed;  /* a failed check of leaked bytes or blocks: show the stacks */
    bool class_failed; /* a failed check of a leak class: show the stacks with classes */
    struct ana_check_values run, base;
    bool all_ended; /* every selected process ended: "leaked", else "live at the end" */
    struct ana_model *m;
    struct cli_view view;
    struct cli_ana b; /* --base, open until the end */
    struct ana_model *bm;
    struct cli_view bview;
    struct ana_reach breach;
    /* By check: a failed growth check's sites that grew in its measure
     * (NULL: none to show), from both runs' sites paired as diff pairs
     * them (diff, made once: diff_made). */
    struct ana_table *grown[MAX_CHECKS];
    struct ana_diff diff;
    bool diff_made;
    uint32_t *leaks; /* row ids of the unsuppressed leaks, largest first */
    uint32_t nr_leaks;
    /* The run's leak classes at exit (record --reach), classes set, and
     * by row id their sums (row_reach), for the leaks shown. */
    bool classes;
    struct ana_reach reach;
    struct ana_reach_sum *row_reach;
};

static void add_growth(struct check *c, const char *list)
{
    size_t first = c->nr;
    const char *bad;
    int rc = ana_check_parse_growth(list, c->lim, MAX_CHECKS, &c->nr, &bad);

    if (rc == -E2BIG)
        cli_usage_error("check: at most %d checks", MAX_CHECKS);
    if (rc)
        cli_usage_error("check: --max-growth wants MEASURE=LIMIT items like peak=5%%,leaked=0 "
                        "(measures: leaked, leaked-blocks, peak, temporary, allocations, "
                        "peak-rss, definitely-lost, lost, lost-blocks, possibly-lost), not '%s'",
                        bad);
    /* Each item is a check, named as given: "max-growth peak=5%". */
    const char *p = list;
    for (size_t i = first; i < c->nr; i++) {
        int len = (int)strcspn(p, ",");
        snprintf(c->name[i], sizeof(c->name[i]), "max-growth %.*s", len, p);
        p += len + (p[len] == ',');
    }
}

static void parse(struct check *c, int argc, char **argv)
{
#define OWN(id, name, key, bytes, words, whole, metric)                                            \
    {"max-" name, required_argument, NULL, OPT_MAX + id},
    static const struct option own[] = {
        ANA_CHECK_MEASURES(OWN){"base", required_argument, NULL, OPT_BASE},
        {"max-growth", required_argument, NULL, OPT_MAX_GROWTH},
        {"junit", required_argument, NULL, OPT_JUNIT},
        {NULL, 0, NULL, 0},
    };
#undef OWN
    struct cli_getopt g = {.takes = CLI_TAKES_FORMAT | CLI_JSON_NOTES | CLI_TAKES_TOP |
                                    CLI_TAKES_PID | CLI_TAKES_THREAD | CLI_TAKES_SYM |
                                    CLI_TAKES_FRAMES | CLI_TAKES_SUPP,
                           .own = own,
                           .usage = usage};
    int o;

    cli_ana_init(&c->a, "check", 5);
    while ((o = cli_getopt(&g, &c->a, argc, argv)) != -1) {
        if (o == OPT_BASE) {
            c->base_path = optarg;
        } else if (o == OPT_JUNIT) {
            c->junit = optarg;
        } else if (o == OPT_MAX_GROWTH) {
            add_growth(c, optarg);
        } else {
            enum ana_check_measure m = (enum ana_check_measure)(o - OPT_MAX);
            if (c->nr == MAX_CHECKS)
                cli_usage_error("check: at most %d checks", MAX_CHECKS);
            if (ana_check_parse_limit(m, false, optarg, &c->lim[c->nr]))
                cli_usage_error("check: --max-%s wants %s, not '%s'", ana_check_measure_name(m),
                                ana_check_measure_bytes(m) ? "a size like 0, 4096 or 64M"
                                                           : "a count like 0 or 100",
                                optarg);
            snprintf(c->name[c->nr++], sizeof(c->name[0]), "max-%s %s", ana_check_measure_name(m),
                     optarg);
        }
    }
    if (!c->nr)
        cli_usage_error("check: no checks; give at least one, e.g. --max-leaked 0 (see "
                        "'memscribe check --help')");
    bool growth = false;
    for (size_t i = 0; i < c->nr; i++)
        growth |= c->lim[i].growth;
    if (growth != !!c->base_path)
        cli_usage_error(growth ? "check: --max-growth wants --base OLD.mscr"
                               : "check: --base goes with --max-growth");
    if (c->a.format == CLI_FMT_CSV)
        cli_usage_error("check: --format wants text or json");
    if (argc - optind != 1)
        cli_usage_error("check: give one trace; see 'memscribe check --help'");
}

/* The numbers of the trace a reads into *v, as report reads them: the
 * model of the selected processes (*m), its view's rows (*view) and leak
 * classes (*reach, record --reach's; zero without), and what suppressions
 * list apart, split off as report's JSON splits it (cli_view_leaks). */
static void measure(struct cli_ana *a, struct ana_check_values *v, struct ana_model **m,
                    struct cli_view *view, struct ana_reach *reach)
{
    struct ana_model_options mo = {.filter = &a->filter, .keep_blocks = ana_reach_present(a->r)};
    struct cli_view_leaks lk;

    /* On a tree the rows are folded at each process's end (cli_fold.h). */
    cli_ana_programs(a, &mo);
    a->fold_alone = true; /* its rows are by key alone */
    cli_fold_setup(a, &mo, CLI_FOLD_ROWS);
    *m = cli_ana_model(a, &mo, UINT64_MAX);
    const struct ana_scope *t = ana_model_total(*m);
    cli_ana_supp_load(a);
    cli_view_answer(a, *m, CLI_ROWS_BY_ALL, view);
    bool classes = ana_reach_present(a->r);
    memset(reach, 0, sizeof(*reach));
    if (classes && ana_reach_build(reach, a->r, *m))
        cli_die("check: out of memory");
    cli_view_leaks(view, UINT32_MAX, t, classes ? &reach->total : NULL, classes ? reach : NULL,
                   &lk);
    *v = (struct ana_check_values){0};
    v->v[ANA_CHECK_LEAKED] = lk.bytes;
    v->suppressed[ANA_CHECK_LEAKED] = lk.supp_bytes;
    v->v[ANA_CHECK_LEAKED_BLOCKS] = lk.blocks;
    v->suppressed[ANA_CHECK_LEAKED_BLOCKS] = lk.supp_blocks;
    v->v[ANA_CHECK_PEAK] = t->peak;
    v->v[ANA_CHECK_TEMPORARY] = t->nr_temporary;
    v->v[ANA_CHECK_ALLOCATIONS] = t->nr_allocs;
    v->v[ANA_CHECK_PEAK_RSS] = t->rss_peak;
    v->v[ANA_CHECK_DEFINITELY_LOST] = lk.cls.bytes[FMT_REACH_DEFINITE];
    v->suppressed[ANA_CHECK_DEFINITELY_LOST] = lk.supp_cls.bytes[FMT_REACH_DEFINITE];
    v->v[ANA_CHECK_LOST] = ana_reach_lost_bytes(&lk.cls);
    v->suppressed[ANA_CHECK_LOST] = ana_reach_lost_bytes(&lk.supp_cls);
    v->v[ANA_CHECK_LOST_BLOCKS] = ana_reach_lost_blocks(&lk.cls);
    v->suppressed[ANA_CHECK_LOST_BLOCKS] = ana_reach_lost_blocks(&lk.supp_cls);
    v->v[ANA_CHECK_POSSIBLY_LOST] = lk.cls.bytes[FMT_REACH_POSSIBLE];
    v->suppressed[ANA_CHECK_POSSIBLY_LOST] = lk.supp_cls.bytes[FMT_REACH_POSSIBLE];
    for (int k = 0; k < ANA_CHECK_NR_MEASURES; k++)
        v->known[k] = true;
    v->known[ANA_CHECK_TEMPORARY] = ana_sample_has_temporary(fmt_reader_sample_bytes(a->r));
    /* A sampled trace's counted totals, where it has them (ana_exact.h) */
    struct ana_exact x;
    ana_exact_of(*m, t, &x);
    if (x.present) {
        v->v[ANA_CHECK_TEMPORARY] = x.v[FMT_CTR_TEMPORARY];
        v->v[ANA_CHECK_ALLOCATIONS] = x.v[FMT_CTR_ALLOCS];
        v->known[ANA_CHECK_TEMPORARY] = true;
    }
    v->known[ANA_CHECK_PEAK_RSS] = t->has_rss;
    v->known[ANA_CHECK_DEFINITELY_LOST] = v->known[ANA_CHECK_LOST] =
        v->known[ANA_CHECK_LOST_BLOCKS] = v->known[ANA_CHECK_POSSIBLY_LOST] = classes;
}

/* Open a's trace (argv[0] of argc), its stacks left for later: a tree's
 * processes' go as they end. */
static void open_trace(struct cli_ana *a, int argc, char **argv, int optind_now)
{
    a->stacks_later = true;
    cli_ana_open(a, argc, argv, optind_now);
}

/* The base trace, read with the run's suppressions, symbol options and
 * --exe (not --pid nor --thread: a base run's ids are another run's). */
static void measure_base(struct check *c)
{
    struct cli_ana *b = &c->b;
    char *argv[] = {(char *)c->base_path, NULL};

    cli_ana_init(b, "check", 0);
    b->sym = c->a.sym;
    b->supp.no_defaults = c->a.supp.no_defaults;
    memcpy(b->supp.files, c->a.supp.files, sizeof(b->supp.files));
    b->supp.nr_files = c->a.supp.nr_files;
    memcpy(b->supp.lsan_files, c->a.supp.lsan_files, sizeof(b->supp.lsan_files));
    b->supp.nr_lsan_files = c->a.supp.nr_lsan_files;
    for (size_t i = 0; i < c->a.filter.nr_exes; i++)
        if (ana_filter_add_exe(&b->filter, c->a.filter.exes[i]))
            cli_die("check: out of memory");
    open_trace(b, 1, argv, 0);
    measure(b, &c->base, &c->bm, &c->bview, &c->breach);
}

/* A side's sites (or the rows its fold made of them) into d, the leaks of
 * those a suppression matches counted 0, as they are in the totals. */
static void add_side(struct cli_ana *a, const struct ana_model *m, const struct cli_view *v,
                     const struct ana_reach *reach, struct ana_diff *d, enum ana_diff_side which)
{
    if (a->fold) {
        cli_diff_add_fold(a, a->fold, d, which, 0);
        return;
    }
    /* The view's rows are the model's sites by stack id (cli_rows.h). */
    uint32_t n = ana_model_nr_sites(m);
    bool *supp = calloc((size_t)n + 1, sizeof(*supp));
    if (!supp)
        cli_die("check: out of memory");
    for (uint32_t id = 0; id < n && id < v->rows.nr; id++)
        supp[id] = v->rows.first[id] < v->rows.nr && v->suppressed[v->rows.first[id]];
    cli_diff_add_sites(a, m, d, which, 0, supp, reach->nr_sites ? reach : NULL);
    free(supp);
}

/* The sites whose measure m grew against the base, most first, matched by
 * function chain as memscribe diff matches them (cli_diff_add_sites),
 * leaks a suppression matches counted 0 on both sides; NULL for a measure
 * not counted by site (peak RSS). */
static struct ana_table *grown_table(struct check *c, enum ana_check_measure m)
{
    /* Columns per metric, e.g. leaked_bytes_base: they outlive the table. */
    static char keys[ANA_DIFF_NR_METRICS][3][40];
    static struct ana_column cols[ANA_DIFF_NR_METRICS][4];
    static const char *const part[3] = {"base", "new", "change"};
    int metric = ana_check_measure_metric(m);
    unsigned frames = c->a.frames_set               ? c->a.frames
                      : c->a.format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES
                                                    : 0;
    struct ana_table *t;

    if (metric < 0)
        return NULL;
    if (!c->diff_made) {
        ana_diff_init(&c->diff);
        add_side(&c->b, c->bm, &c->bview, &c->breach, &c->diff, ANA_DIFF_BASE);
        add_side(&c->a, c->m, &c->view, &c->reach, &c->diff, ANA_DIFF_NEW);
        ana_diff_finish(&c->diff);
        c->diff_made = true;
    }
    for (unsigned p = 0; p < 3; p++) {
        snprintf(keys[metric][p], sizeof(keys[metric][p]), "%s_%s",
                 ana_diff_metric_key((enum ana_diff_metric)metric), part[p]);
        cols[metric][p] = (struct ana_column){p == 2 ? "+/-" : part[p], keys[metric][p],
                                              p == 2 ? ANA_CELL_I64 : ANA_CELL_U64};
    }
    cols[metric][3] = (struct ana_column){"site", "site", ANA_CELL_LIST | ANA_CELL_INTEREST};
    if (ana_table_create(&t, cols[metric], 4))
        cli_die("check: out of memory");
    ana_diff_sort(&c->diff, (enum ana_diff_metric)metric);
    for (size_t i = 0, shown = 0; i < c->diff.nr_rows && (!c->a.top || shown < c->a.top); i++) {
        const struct ana_diff_row *r = &c->diff.rows[i];
        int64_t change = ana_diff_change(r, (enum ana_diff_metric)metric);
        if (change <= 0)
            continue;
        if (ana_table_add_row(t))
            cli_die("check: out of memory");
        ana_table_set_u64(t, 0, r->v[ANA_DIFF_BASE][metric]);
        ana_table_set_u64(t, 1, r->v[ANA_DIFF_NEW][metric]);
        ana_table_set_i64(t, 2, change);
        cli_diff_set_site(&c->a, &c->b, t, 3, r->key, frames);
        shown++;
    }
    return t;
}

static bool is_class(enum ana_check_measure m)
{
    return m == ANA_CHECK_DEFINITELY_LOST || m == ANA_CHECK_LOST || m == ANA_CHECK_LOST_BLOCKS ||
           m == ANA_CHECK_POSSIBLY_LOST;
}

static uint64_t lost_or_possible(const struct ana_reach_sum *s)
{
    return ana_reach_lost_bytes(s) + s->bytes[FMT_REACH_POSSIBLE];
}

/* qsort_r's order of row ids by their classes (arg: by row id): more
 * bytes lost first, then more possibly lost, then the lower id. */
static int cmp_lost(const void *x, const void *y, void *arg)
{
    const struct ana_reach_sum *r = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t la = ana_reach_lost_bytes(&r[a]), lb = ana_reach_lost_bytes(&r[b]);
    uint64_t pa = r[a].bytes[FMT_REACH_POSSIBLE], pb = r[b].bytes[FMT_REACH_POSSIBLE];

    if (la != lb)
        return la > lb ? -1 : 1;
    if (pa != pb)
        return pa > pb ? -1 : 1;
    return (a > b) - (a < b);
}

/* Decide every check; the leaks to show when a leak check failed. */
static void decide(struct check *c)
{
    for (size_t i = 0; i < c->nr; i++) {
        enum ana_check_measure m = c->lim[i].measure;
        ana_check_eval(&c->lim[i], &c->run, c->lim[i].growth ? &c->base : NULL, &c->res[i]);
        if (c->res[i].pass)
            continue;
        c->nr_failed++;
        bool leak = m == ANA_CHECK_LEAKED || m == ANA_CHECK_LEAKED_BLOCKS;
        bool cls = is_class(m) && c->res[i].known;
        c->leak_failed |= (leak || cls) && !c->lim[i].growth;
        c->class_failed |= cls && !c->lim[i].growth;
        if (c->lim[i].growth && c->res[i].known)
            c->grown[i] = grown_table(c, m);
    }
    if (!c->leak_failed)
        return;
    uint32_t n = c->view.rows.nr;
    if (!(c->leaks = malloc(((size_t)n + 1) * sizeof(*c->leaks))))
        cli_die("check: out of memory");
    if (c->classes)
        c->row_reach = cli_rows_reach(&c->view.rows, n, &c->reach);
    /* A failed class check lists the rows with lost or possibly lost
     * blocks, most lost first; a failed leak check every leak. */
    for (uint32_t id = 0; id < n; id++) {
        const struct ana_site *s = c->view.rows.row[id];
        if (s && s->live_blocks > 0 && !c->view.suppressed[id] &&
            (!c->class_failed || lost_or_possible(&c->row_reach[id])))
            c->leaks[c->nr_leaks++] = id;
    }
    if (c->class_failed)
        qsort_r(c->leaks, c->nr_leaks, sizeof(*c->leaks), cmp_lost, c->row_reach);
    else
        qsort_r(c->leaks, c->nr_leaks, sizeof(*c->leaks), cli_rows_cmp_leaked, c->view.rows.row);
    if (c->a.top && c->nr_leaks > c->a.top)
        c->nr_leaks = c->a.top;
}

/* A number of measure m: "104 bytes" or "2". */
static const char *amount(enum ana_check_measure m, int64_t v, bool sign, char *buf, size_t size)
{
    snprintf(buf, size, "%s%" PRId64 "%s", sign && v >= 0 ? "+" : "", v,
             ana_check_measure_bytes(m) ? " bytes" : "");
    return buf;
}

/* What check i found, in one line, in the words report uses for the
 * same number: "unsuppressed leaked: 104 bytes (104 leaked, 0 suppressed;
 * limit 0 bytes)". */
static void describe(const struct check *c, size_t i, char *buf, size_t size)
{
    const struct ana_check_limit *l = &c->lim[i];
    const struct ana_check_result *r = &c->res[i];
    enum ana_check_measure m = l->measure;
    const char *what = ana_check_measure_words(m), *whole = ana_check_measure_whole(m);
    char v[48], b[48], g[48], al[48], w[48], sp[48], limit[256], hint[128] = "";

    if (!r->known && m >= ANA_CHECK_DEFINITELY_LOST) {
        snprintf(buf, size, "%s: no reachability classes in the trace (record --reach)", what);
        return;
    }
    if (!r->known) {
        bool rss = m == ANA_CHECK_PEAK_RSS;
        snprintf(buf, size, "%s: %s in the %strace", what, rss ? "not recorded" : "not estimated",
                 rss ? "" : "sampled ");
        return;
    }
    /* On a trace with classes, leaked counts the still-reachable blocks
     * too (a cache, a pool): growth there is not a leak's. */
    if (c->classes && (m == ANA_CHECK_LEAKED || m == ANA_CHECK_LEAKED_BLOCKS))
        snprintf(hint, sizeof(hint), "; it counts still-reachable %s too, %s the lost ones only",
                 m == ANA_CHECK_LEAKED ? "bytes" : "blocks",
                 m == ANA_CHECK_LEAKED ? "lost" : "lost-blocks");
    amount(m, (int64_t)r->value, false, v, sizeof(v));
    if (!l->growth) {
        amount(m, (int64_t)r->allowed, false, al, sizeof(al));
        if (whole)
            snprintf(limit, sizeof(limit), "%s %s, %s suppressed; limit %s",
                     amount(m, (int64_t)(r->value + c->run.suppressed[m]), false, w, sizeof(w)),
                     whole, amount(m, (int64_t)c->run.suppressed[m], false, sp, sizeof(sp)), al);
        else
            snprintf(limit, sizeof(limit), "limit %s", al);
        snprintf(buf, size, "%s: %s (%s)%s", what, v, limit, hint);
        return;
    }
    amount(m, (int64_t)r->base, false, b, sizeof(b));
    amount(m, r->growth, true, g, sizeof(g));
    amount(m, (int64_t)r->allowed, true, al, sizeof(al));
    if (l->percent)
        snprintf(buf, size, "%s: %s against base %s, growth %s (limit %s: %s)%s", what, v, b, g,
                 strchr(c->name[i], '=') + 1, al, hint);
    else
        snprintf(buf, size, "%s: %s against base %s, growth %s (limit %s)%s", what, v, b, g, al,
                 hint);
}

/* The leaks shown under a failed leak check: bytes, blocks, with leak
 * classes the bytes of each lost class, stack. */
static struct ana_table *leak_table(struct check *c)
{
    static const struct ana_column cols[] = {
        {"bytes", "leaked_bytes", ANA_CELL_U64 | ANA_CELL_EST},
        {"blocks", "leaked_blocks", ANA_CELL_U64 | ANA_CELL_EST},
        {"definite", "definitely_lost_bytes", ANA_CELL_U64},
        {"indirect", "indirectly_lost_bytes", ANA_CELL_U64},
        {"possible", "possibly_lost_bytes", ANA_CELL_U64},
        {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
    };
    /* The table keeps its columns: static, as cols. */
    static const struct ana_column plain[] = {
        {"bytes", "leaked_bytes", ANA_CELL_U64 | ANA_CELL_EST},
        {"blocks", "leaked_blocks", ANA_CELL_U64 | ANA_CELL_EST},
        {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
    };
    unsigned nc = c->row_reach ? 6 : 3, nr;
    struct ana_table *t;

    if (ana_table_create(&t, c->row_reach ? cols : plain, nc))
        cli_die("check: out of memory");
    /* rows that would read alike show more of their stacks */
    uint32_t *stacks = malloc(((size_t)c->nr_leaks + 1) * sizeof(*stacks));
    if (!stacks)
        cli_die("check: out of memory");
    for (uint32_t k = 0; k < c->nr_leaks; k++)
        stacks[k] = cli_view_stack(&c->view, c->leaks[k]);
    cli_ana_apart(&c->a, stacks, c->nr_leaks, CLI_ANA_TEXT_FRAMES);
    free(stacks);
    for (uint32_t k = 0; k < c->nr_leaks; k++) {
        const struct ana_site *s = c->view.rows.row[c->leaks[k]];
        ana_table_add_row(t);
        ana_table_set_u64(t, 0, (uint64_t)s->live_bytes);
        ana_table_set_u64(t, 1, (uint64_t)s->live_blocks);
        cli_rows_set_se(&c->a, t, s, 0, (struct cli_rows_se_cols){-1, 0, 1, -1, -1});
        const struct ana_reach_sum *r = c->row_reach ? &c->row_reach[c->leaks[k]] : NULL;
        for (unsigned j = 0; r && j < 3; j++)
            ana_table_set_u64(t, 2 + j, r->bytes[ana_reach_order[j]]);
        const char *const *fr =
            cli_ana_stack(&c->a, cli_view_stack(&c->view, c->leaks[k]), false,
                          c->a.format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
        ana_table_set_stack(t, nc - 1, fr, nr, c->a.interest);
    }
    return t;
}

/* The heading of failed growth check i's sites: what they grew in, or
 * why there are none to list. */
static void grown_heading(const struct check *c, size_t i, char *buf, size_t size)
{
    const char *what = ana_check_measure_words(c->lim[i].measure);

    if (!c->grown[i])
        snprintf(buf, size, "%s: %s is not counted by call site, there are no sites to list",
                 c->name[i], what);
    else if (!ana_table_nr_rows(c->grown[i]))
        snprintf(buf, size,
                 "%s: no site grew in %s against the base (the total did: sites "
                 "matched by function chain, as diff matches them, may have moved)",
                 c->name[i], what);
    else
        snprintf(buf, size,
                 "%s: the sites that grew in %s against the base, most first "
                 "(matched by function chain, as diff matches them)",
                 c->name[i], what);
}

static void write_text(struct check *c)
{
    char line[512];

    fprintf(c->out, "memscribe check: %s", c->a.path);
    if (c->base_path)
        fprintf(c->out, " (base %s)", c->base_path);
    fputc('\n', c->out);
    for (size_t i = 0; i < c->nr; i++) {
        describe(c, i, line, sizeof(line));
        fprintf(c->out, "%s  %-26s %s\n", c->res[i].pass ? "PASS" : "FAIL", c->name[i], line);
    }
    if (c->leak_failed && c->nr_leaks) {
        struct ana_table *t = leak_table(c);
        fprintf(c->out, "\n%s, largest first:\n",
                c->class_failed ? "unsuppressed leaks lost or possibly lost at exit"
                : c->all_ended  ? "unsuppressed leaks"
                                : "unsuppressed blocks live at the end (not every process ended)");
        cli_ana_table(&c->a, t, c->out, "", true);
        ana_table_destroy(t);
    }
    for (size_t i = 0; i < c->nr; i++) {
        if (!c->lim[i].growth || c->res[i].pass || !c->res[i].known)
            continue;
        grown_heading(c, i, line, sizeof(line));
        fprintf(c->out, "\n%s:\n", line);
        if (c->grown[i] && ana_table_nr_rows(c->grown[i]))
            cli_ana_table(&c->a, c->grown[i], c->out, "", true);
    }
    if (c->nr_failed)
        fprintf(c->out, "\ncheck: %u of %zu checks failed\n", c->nr_failed, c->nr);
    else
        fprintf(c->out, "\ncheck: all %zu checks passed\n", c->nr);
}

static void write_json(struct check *c)
{
    struct ana_json j;
    char line[512];

    cli_ana_json_begin_on(&c->a, &j, c->out);
    ana_json_key(&j, "base");
    if (c->base_path)
        ana_json_str(&j, c->base_path);
    else
        ana_json_null(&j);
    ana_json_key(&j, "passed");
    ana_json_bool(&j, !c->nr_failed);
    ana_json_kv_bool(&j, "all_ended", c->all_ended);
    ana_json_key(&j, "checks");
    ana_json_begin_array(&j);
    for (size_t i = 0; i < c->nr; i++) {
        const struct ana_check_result *r = &c->res[i];
        ana_json_begin_object(&j);
        ana_json_kv_str(&j, "check", c->name[i]);
        ana_json_kv_str(&j, "measure", ana_check_measure_key(c->lim[i].measure));
        ana_json_kv_bool(&j, "growth", c->lim[i].growth);
        ana_json_kv_u64_or_null(&j, "value", r->known, r->value);
        if (c->lim[i].growth) {
            ana_json_kv_u64_or_null(&j, "base", r->known, r->base);
            ana_json_key(&j, "change");
            if (r->known)
                ana_json_i64(&j, r->growth);
            else
                ana_json_null(&j);
        }
        ana_json_kv_u64_or_null(&j, "limit", r->known || !c->lim[i].percent, r->allowed);
        ana_json_kv_bool(&j, "passed", r->pass);
        describe(c, i, line, sizeof(line));
        ana_json_kv_str(&j, "message", line);
        if (c->lim[i].growth) {
            ana_json_key(&j, "grown");
            if (c->grown[i] && !r->pass)
                ana_table_write_json(c->grown[i], &j);
            else
                ana_json_null(&j);
        }
        ana_json_end_object(&j);
    }
    ana_json_end_array(&j);
    ana_json_key(&j, "leaks");
    if (c->leak_failed) {
        struct ana_table *t = leak_table(c);
        ana_table_write_json(t, &j);
        ana_table_destroy(t);
    } else {
        ana_json_null(&j);
    }
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("check: writing the output failed");
}

/* Table t as text under heading, XML-escaped, into f: the rest of a
 * JUnit failure's text. */
static void junit_table(struct check *c, FILE *f, const char *heading, const struct ana_table *t)
{
    enum cli_format format = c->a.format;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);

    if (!mem)
        cli_die("check: out of memory");
    fprintf(mem, "\n\n%s:\n", heading);
    c->a.format = CLI_FMT_TEXT;
    cli_ana_table(&c->a, t, mem, "", true);
    c->a.format = format;
    if (fclose(mem))
        cli_die("check: out of memory");
    ana_xml_escape(f, buf, len);
    free(buf);
}

/* JUnit XML: one testsuite, one testcase per check, a failure element
 * with the numbers in a failed one (the schema Jenkins and GitLab read). */
static void write_junit(struct check *c)
{
    FILE *f = cli_output_stream("check", c->junit);
    char line[512];

    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"memscribe check\" tests=\"%zu\" failures=\"%u\" errors=\"0\">\n"
            "  <testsuite name=\"",
            c->nr, c->nr_failed);
    ana_xml_escape(f, c->a.path, strlen(c->a.path));
    fprintf(f, "\" tests=\"%zu\" failures=\"%u\" errors=\"0\" skipped=\"0\">\n", c->nr,
            c->nr_failed);
    for (size_t i = 0; i < c->nr; i++) {
        enum ana_check_measure m = c->lim[i].measure;
        fputs("    <testcase classname=\"memscribe.check\" name=\"", f);
        ana_xml_escape(f, c->name[i], strlen(c->name[i]));
        if (c->res[i].pass) {
            fputs("\"/>\n", f);
            continue;
        }
        describe(c, i, line, sizeof(line));
        fputs("\">\n      <failure type=\"memscribe.check\" message=\"", f);
        ana_xml_escape(f, line, strlen(line));
        fputs("\">", f);
        ana_xml_escape(f, line, strlen(line));
        bool leak = m == ANA_CHECK_LEAKED || m == ANA_CHECK_LEAKED_BLOCKS;
        if (c->lim[i].growth && c->grown[i] && ana_table_nr_rows(c->grown[i])) {
            char heading[256];
            grown_heading(c, i, heading, sizeof(heading));
            junit_table(c, f, heading, c->grown[i]);
        } else if ((leak || is_class(m)) && !c->lim[i].growth && c->nr_leaks) {
            struct ana_table *t = leak_table(c);
            junit_table(c, f,
                        c->class_failed
                            ? "unsuppressed leaks lost or possibly lost at exit, largest first"
                            : "unsuppressed leaks, largest first",
                        t);
            ana_table_destroy(t);
        }
        fputs("</failure>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    if (fflush(f) || ferror(f) || fclose(f))
        cli_die("check: %s: writing the JUnit XML failed", c->junit);
}

/* Each check to fn (cli_check_each). */
static void hand_over(const struct check *c, cli_check_fn *fn, void *arg)
{
    char name[64];

    for (size_t i = 0; i < c->nr; i++) {
        const struct ana_check_limit *l = &c->lim[i];
        const struct ana_check_result *r = &c->res[i];
        uint64_t allowed = l->growth && r->known ? r->base + r->allowed : r->allowed;
        snprintf(name, sizeof(name), "max-%s%s", l->growth ? "growth-" : "",
                 ana_check_measure_name(l->measure));
        fn(arg, &(struct cli_check_outcome){name, ana_check_measure_key(l->measure), r->known,
                                            r->pass, r->value, allowed});
    }
}

/* cli_check_run, or with fn cli_check_each. */
static int check_run(int argc, char **argv, FILE *out, bool parse_only, cli_check_fn *fn, void *arg)
{
    struct check c = {.out = out};

    optind = 0; /* record --check parses its own options first */
    parse(&c, argc, argv);
    if (parse_only)
        return cli_ana_close(&c.a);
    open_trace(&c.a, argc, argv, optind);
    if (c.base_path)
        measure_base(&c);
    measure(&c.a, &c.run, &c.m, &c.view, &c.reach);
    c.classes = c.run.known[ANA_CHECK_LOST];
    c.all_ended = ana_model_all_ended(c.m);
    decide(&c);
    if (fn)
        hand_over(&c, fn, arg);
    else if (c.a.format == CLI_FMT_JSON)
        write_json(&c);
    else
        write_text(&c);
    if (c.junit && !fn)
        write_junit(&c);
    free(c.leaks);
    free(c.row_reach);
    ana_reach_release(&c.reach);
    for (size_t i = 0; i < c.nr; i++)
        ana_table_destroy(c.grown[i]);
    if (c.diff_made)
        ana_diff_release(&c.diff);
    cli_view_release(&c.view);
    ana_model_destroy(c.m);
    if (c.base_path) {
        ana_reach_release(&c.breach);
        cli_view_release(&c.bview);
        ana_model_destroy(c.bm);
        cli_ana_close(&c.b);
    }
    int rc = cli_ana_close(&c.a);
    if (out && (fflush(out) || ferror(out)))
        cli_die("check: writing the output failed");
    return rc ? rc : c.nr_failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cli_check_run(int argc, char **argv, FILE *out, bool parse_only)
{
    return check_run(argc, argv, out, parse_only, NULL, NULL);
}

int cli_check_each(int argc, char **argv, cli_check_fn *fn, void *arg)
{
    return check_run(argc, argv, NULL, false, fn, arg);
}

int cmd_check(int argc, char **argv)
{
    return cli_check_run(argc, argv, stdout, false);
}
