/* SPDX-License-Identifier: MIT */
/* memscribe plot: SVG pictures of a trace: heap use over time with the peak
 * marked, and the log-log size histogram (docs/plot.md). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_time.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_timeline.h"
#include "analysis/pictures/ana_plot.h"
#include "analysis/pictures/ana_plot_data.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"
#include "util/util_duration.h"

enum {
    OPT_TITLE = CLI_ANA_OPT_FIRST_OWN,
    OPT_WIDTH,
    OPT_HEIGHT,
    OPT_INTERVAL,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe plot timeline|histogram [options] FILE [-o OUT.svg]\n\n"
                 "  timeline    heap in use and RSS over time with the peak marked, and\n"
                 "              cumulative allocated bytes below\n"
                 "  histogram   allocations and bytes per power-of-two size class, on\n"
                 "              log-log axes\n\n"
                 "options:\n"
                 "  -o, --output F  write to F (default: standard output; on a terminal, a\n"
                 "                  file named after the trace; -: standard output)\n"
                 "  --title T       the plot's title\n"
                 "  --width PX      (default 1000)\n"
                 "  --height PX     (default 520 for the timeline, 560 for the histogram)\n"
                 "  --interval T    timeline resolution, e.g. 1ms (default: 1/2000 of the\n"
                 "                  trace; every interval's maximum is drawn)\n"
                 "  --pid LIST      only these processes (comma-separated pids)\n"
                 "  --exe GLOB      only processes whose executable (name or path) matches\n"
                 "  --thread LIST   only blocks allocated by these threads (tids)\n"
                 "  -h, --help      this text\n"
                 "\nExit status: 0 ok, 1 unreadable trace or failed write, 2 usage error.\n"
                 "See docs/plot.md.\n");
}

static int plot_timeline(struct cli_ana *a, uint64_t interval, const char *title, double width,
                         double height, const char *subtitle, FILE *out)
{
    struct fmt_trace_counts c;
    struct ana_model *m = NULL;
    struct ana_timeline tl;
    struct ana_plot_timeline p;
    struct ana_plot_series s;
    int rc;

    fmt_reader_counts(a->r, &c);
    if (!interval)
        interval = c.last_ts_ns / 2000 ? c.last_ts_ns / 2000 : 1;
    /* The timeline rows, and the model they were read off for the exact peak. */
    rc = ana_timeline_compute_model(&tl, a->r, &a->filter, interval, cli_ana_progress, a, &m);
    cli_ana_progress_done(a);
    if (rc)
        cli_ana_fail(a, rc);
    if ((rc = ana_plot_timeline_from(&p, &s, &tl, ana_model_total(m), c.last_ts_ns)))
        cli_ana_fail(a, rc);
    p.title = title;
    p.subtitle = subtitle;
    p.width = width;
    p.height = height;
    rc = ana_plot_timeline_svg(&p, out, 0, NULL);
    ana_plot_series_release(&s);
    ana_model_destroy(m);
    ana_timeline_release(&tl);
    return rc;
}

static int plot_histogram(struct cli_ana *a, const char *title, double width, double height,
                          const char *subtitle, FILE *out)
{
    struct ana_histogram h;
    struct ana_heap_replay replay;
    struct ana_plot_bucket b[ANA_NR_SIZE_CLASSES];
    int rc;

    ana_histogram_init(&h, false);
    ana_heap_replay_init(&replay, &(struct ana_step_options){.filter = &a->filter});
    if ((rc = ana_histogram_subscribe(&h, &replay)))
        cli_ana_fail(a, rc);
    cli_ana_run(a, &replay, UINT64_MAX);
    ana_heap_replay_release(&replay);
    struct ana_plot_histogram p = {
        .buckets = b,
        .nr_buckets = ana_plot_buckets_from(b, &h),
        .title = title,
        .subtitle = subtitle,
        .width = width,
        .height = height,
    };
    rc = ana_plot_histogram_svg(&p, out, 0);
    ana_histogram_release(&h);
    return rc;
}

static double pixels(struct cli_ana *a, const char *opt, const char *arg)
{
    unsigned long v = cli_ana_number(a, opt, arg);

    if (v < 200 || v > 20000)
        cli_usage_error("plot: %s wants 200 to 20000 pixels, not '%s'", opt, arg);
    return (double)v;
}

int cmd_plot(int argc, char **argv)
{
    static const struct option own[] = {
        {"title", required_argument, NULL, OPT_TITLE},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"height", required_argument, NULL, OPT_HEIGHT},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_PID | CLI_TAKES_THREAD | CLI_TAKES_OUTPUT, .own = own, .usage = usage};
    const char *title = NULL, *what;
    double width = 0, height = 0;
    uint64_t interval = 0;
    struct cli_ana a;
    int c, rc;

    cli_ana_init(&a, "plot", 0);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_TITLE:
            title = optarg;
            break;
        case OPT_WIDTH:
            width = pixels(&a, "--width", optarg);
            break;
        case OPT_HEIGHT:
            height = pixels(&a, "--height", optarg);
            break;
        case OPT_INTERVAL:
            if (util_duration_parse(optarg, &interval) || !interval)
                cli_usage_error("plot: --interval wants a duration like 1ms or 50us, not '%s'",
                                optarg);
            break;
        }
    }
    if (optind >= argc)
        cli_usage_error("plot: say what to plot: timeline or histogram; see 'memscribe plot "
                        "--help'");
    /* getopt moved the options first: what is left is the plot and FILE. */
    what = argv[optind++];
    if (strcmp(what, "timeline") && strcmp(what, "histogram"))
        cli_usage_error("plot: '%s' is not a plot: timeline or histogram", what);
    a.stacks_later = true; /* the plots read no stack */
    cli_ana_open(&a, argc, argv, optind);

    struct cli_output out;
    cli_output_open(&out, "plot", a.output, a.path,
                    !strcmp(what, "timeline") ? "-timeline.svg" : "-histogram.svg");
    char cmdline[1024], subtitle[1600], agg[ANA_AGGREGATE_NOTE_SIZE];
    ana_plot_command_line(fmt_reader_info(a.r), cmdline, sizeof(cmdline));
    /* An aggregated trace's timeline has rows at its cuts: the label says so. */
    ana_aggregate_label(agg, sizeof(agg), fmt_reader_info(a.r));
    snprintf(subtitle, sizeof(subtitle), "%s%s%s%s%s", a.path, *cmdline ? ": " : "", cmdline,
             *agg ? " -- " : "", agg);
    if (!strcmp(what, "timeline"))
        rc = plot_timeline(&a, interval, title, width, height, subtitle, out.f);
    else
        rc = plot_histogram(&a, title, width, height, subtitle, out.f);
    rc = cli_output_close(&out, "plot", rc);
    if (rc)
        cli_die("plot: writing %s: %s", out.name, strerror(-rc));
    return cli_ana_close(&a);
}
