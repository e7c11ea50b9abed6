/* SPDX-License-Identifier: MIT */
/* memscribe flamegraph: a flame graph of the heap model's call sites by
 * one cost, as an interactive SVG or as folded stacks (docs/flamegraph.md). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_scan.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"
#include "analysis/pictures/ana_plot_data.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_diff.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"

/* Call sites an SVG draws at most; see ana_flame_top_sites(). */
#define FLAME_MAX_SITES 10000

enum {
    OPT_COST = CLI_ANA_OPT_FIRST_OWN,
    OPT_INVERTED,
    OPT_FOLDED,
    OPT_TITLE,
    OPT_WIDTH,
    OPT_DIFF,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe flamegraph [options] FILE [-o OUT.svg]\n"
                 "       memscribe flamegraph --diff [options] BASE NEW [-o OUT.svg]\n\n"
                 "Draw a flame graph of where memory is allocated: one box per function on\n"
                 "a call path, as wide as its cost. The SVG is interactive in a browser:\n"
                 "click a frame to zoom, Search (or Ctrl-F) to highlight by regular\n"
                 "expression, Reset Zoom to go back.\n\n"
                 "options:\n"
                 "  -o, --output F  write to F (default: standard output; on a terminal, a\n"
                 "                  file named after the trace; -: standard output)\n"
                 "  --cost C        allocations, bytes (default), leaked (bytes live at the\n"
                 "                  end), peak (bytes live at the heap's peak) or temporary\n"
                 "                  (blocks freed before their thread allocated or freed\n"
                 "                  anything else: heaptrack's rule, per thread)\n"
                 "  --inverted      the allocating functions at the root (drawn from the\n"
                 "                  top), their callers below\n"
                 "  --folded        folded stacks ('main;f;g 123' per line) for\n"
                 "                  flamegraph.pl, speedscope or inferno instead of SVG\n"
                 "  --title T       the title (default: 'Flame graph: COST')\n"
                 "  --width PX      width of the SVG (default 1200)\n"
                 "  --diff          a differential graph of NEW against BASE: widths from\n"
                 "                  NEW, frames red as far as they grew, blue as far as they\n"
                 "                  shrank (call paths matched by function names)\n"
                 "  --pid LIST      only these processes (comma-separated pids)\n"
                 "  --exe GLOB      only processes whose executable (name or path) matches\n"
                 "  --thread LIST   only blocks allocated by these threads (tids)\n"
                 "  -h, --help      this text\n" CLI_ANA_PROGRAMS_USAGE CLI_SYM_USAGE
                 "\nExit status: 0 ok, 1 unreadable trace or failed write, 2 usage error.\n"
                 "See docs/flamegraph.md.\n");
}

/* The labels of the programs' frames (a->programs). NULL when out of
 * memory. */
static uint32_t *program_labels(struct cli_ana *a, struct ana_stacks *st)
{
    uint32_t *label_of = calloc((size_t)a->programs.nr + 1, sizeof(*label_of));
    char name[300];

    for (uint32_t k = 0; label_of && k < a->programs.nr; k++) {
        cli_ana_program_name(a, k, true, name, sizeof(name));
        if (ana_stacks_intern(st, name, &label_of[k])) {
            free(label_of);
            return NULL;
        }
    }
    return label_of;
}

/* The graph of the rows a tree's replay folded (cli_fold.h). */
static int build_folded(struct cli_ana *a, struct ana_tree *t, struct ana_stacks *st, int inverted,
                        uint32_t max)
{
    uint32_t *label_of = program_labels(a, st);
    int rc = label_of ? ana_flame_build_folded(t, a->fold, st, inverted, max, label_of) : -ENOMEM;

    free(label_of);
    return rc;
}

/* The graph of m's sites; in the per-program view, each under a frame of
 * its program. */
static int build(struct cli_ana *a, struct ana_tree *t, const struct ana_model *m,
                 struct ana_stacks *st, int inverted, const uint8_t *keep)
{
    uint32_t *label_of, *root_of;
    int rc = 0;

    if (!a->by_program)
        return ana_flame_build(t, m, st, inverted, keep);
    label_of = program_labels(a, st);
    root_of = calloc((size_t)a->programs.nr_images + 1, sizeof(*root_of));
    if (!label_of || !root_of)
        rc = -ENOMEM;
    for (uint32_t i = 0; i < a->programs.nr_images && !rc; i++)
        root_of[i] = label_of[a->programs.of_image[i]];
    if (!rc)
        rc = ana_flame_build_rooted(t, m, st, inverted, keep, root_of, a->programs.nr_images);
    free(label_of);
    free(root_of);
    return rc;
}

/* The graph t as folded stacks or an SVG (so) to -o's file or the
 * default one; a sampled or aggregated trace's label in the subtitle and
 * the folded stacks' first line. */
static void write_graph(struct cli_ana *a, const struct ana_tree *t, struct ana_stacks *st,
                        struct ana_flame_svg_options *so, int folded)
{
    int rc;

    struct cli_output out;
    /* Folded stacks are text: a terminal is a fine place for them. */
    cli_output_open(&out, "flamegraph", folded && !a->output ? "-" : a->output, a->path,
                    "-flame.svg");
    char cmdline[1024], subtitle[1400], label[ANA_AGGREGATE_NOTE_SIZE];
    ana_plot_command_line(fmt_reader_info(a->r), cmdline, sizeof(cmdline));
    /* A sampled trace: the subtitle, and a first line of folded stacks,
     * say its figures are estimates (ana_sample.h). */
    ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(a->r));
    if (!*label) /* an aggregated trace says so as well (ana_aggregate.h) */
        ana_aggregate_label(label, sizeof(label), fmt_reader_info(a->r));
    snprintf(subtitle, sizeof(subtitle), "%s%s%s%s%s", a->path, *cmdline ? ": " : "", cmdline,
             *label ? " -- " : "", label);
    so->subtitle = subtitle;
    if (folded && *label)
        fprintf(out.f, "# %s\n", label);
    if (folded)
        rc = ana_flame_write_folded(t, ana_stacks_str_fn, st, out.f, so->cost);
    else
        rc = ana_flame_write_svg(t, ana_stacks_str_fn, st, out.f, so);
    rc = cli_output_close(&out, "flamegraph", rc);
    if (rc)
        cli_die("flamegraph: writing %s: %s", out.name, strerror(-rc));
}

int cmd_flamegraph(int argc, char **argv)
{
    static const struct option own[] = {
        {"cost", required_argument, NULL, OPT_COST},
        {"inverted", no_argument, NULL, OPT_INVERTED},
        {"folded", no_argument, NULL, OPT_FOLDED},
        {"title", required_argument, NULL, OPT_TITLE},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"diff", no_argument, NULL, OPT_DIFF},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_PID | CLI_TAKES_THREAD | CLI_TAKES_SYM |
                                    CLI_TAKES_OUTPUT | CLI_TAKES_PROGRAMS,
                           .own = own,
                           .usage = usage};
    struct ana_flame_svg_options so = {.cost = ANA_FLAME_BYTES};
    int folded = 0, diff = 0, c, rc;
    struct cli_ana a;

    cli_ana_init(&a, "flamegraph", 0);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_COST:
            if (ana_flame_cost_parse(optarg, &so.cost))
                cli_usage_error("flamegraph: --cost wants allocations, bytes, leaked, peak or "
                                "temporary, not '%s'",
                                optarg);
            break;
        case OPT_INVERTED:
            so.inverted = 1;
            break;
        case OPT_FOLDED:
            folded = 1;
            break;
        case OPT_DIFF:
            diff = 1;
            break;
        case OPT_TITLE:
            so.title = optarg;
            break;
        case OPT_WIDTH:
            so.width = (double)cli_ana_number(&a, "--width", optarg);
            if (so.width < 200 || so.width > 100000)
                cli_usage_error("flamegraph: --width wants 200 to 100000 pixels, not '%s'", optarg);
            break;
        }
    }
    if (diff && (folded || !ana_filter_is_empty(&a.filter)))
        cli_usage_error("flamegraph: --diff draws an SVG of two whole traces (no --folded, --pid "
                        "or --thread)");
    if (diff && argc - optind != 2)
        cli_usage_error("flamegraph: --diff wants two traces, BASE and NEW");
    a.stacks_later = !diff; /* it may fold a tree's processes (cli_fold.h) */
    cli_ana_open(&a, argc, argv, optind + diff);
    if (so.cost == ANA_FLAME_TEMPORARY)
        cli_ana_want_temporary(&a, "--cost temporary");

    struct ana_model_options mo = {.filter = &a.filter};
    struct ana_model *m;
    /* The per-program view: a frame per program under the root (not with
     * --diff, whose base graph has none). */
    a.by_process |= diff;
    cli_ana_programs(&a, NULL); /* the graph needs no program scopes */
    /* A tree's processes are folded into the programs' paths as each ends. */
    bool fold = cli_fold_setup(&a, &mo, CLI_FOLD_FLAME);
    struct ana_scan_options sc;
    cli_ana_scan_options(&a, UINT64_MAX, &sc);
    if ((rc = ana_model_build(&m, a.r, &mo, &sc)))
        cli_ana_fail(&a, rc);
    cli_ana_progress_done(&a);
    if (fold)
        ana_fold_finish(a.fold, m);

    struct ana_stacks *st = cli_ana_stacks(&a);
    struct ana_tree t;
    uint8_t *keep = NULL;
    /* Folded stacks keep every site; a picture needs no more sites than
     * it has pixels to show them (the rest are lumped, totals exact). */
    long kept = folded || fold ? 0 : ana_flame_top_sites(m, st, FLAME_MAX_SITES, &keep);
    if (kept < 0)
        cli_ana_fail(&a, (int)kept);
    if ((rc = ana_tree_init(&t, ANA_FLAME_NR_COSTS, 0)) ||
        (rc = fold ? build_folded(&a, &t, st, so.inverted, folded ? 0 : FLAME_MAX_SITES)
                   : build(&a, &t, m, st, so.inverted, keep)) ||
        (rc = ana_flame_sort(&t, ana_stacks_str_fn, st)))
        cli_ana_fail(&a, rc);

    int64_t *base = NULL;
    if (diff)
        so.base = base = cli_diff_flame_base(&a, argv[optind], &t, so.cost, so.inverted);

    write_graph(&a, &t, st, &so, folded);
    ana_tree_release(&t);
    free(base);
    free(keep);
    ana_model_destroy(m);
    return cli_ana_close(&a);
}
