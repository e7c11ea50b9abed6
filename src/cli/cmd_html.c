/* SPDX-License-Identifier: MIT */
/* memscribe html: one self-contained HTML report of a trace (docs/html.md). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/html/ana_html.h"
#include "analysis/model/ana_reach.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_diff.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"

enum {
    OPT_BUCKETS = CLI_ANA_OPT_FIRST_OWN,
    OPT_BASE,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe html [options] FILE [-o report.html]\n\n"
                 "Write one HTML file that opens offline in any browser: the summary, heap\n"
                 "use over time where dragging across a time range recomputes the window\n"
                 "table (Count, Size, Impacting Size, Transient and Impacting by call site,\n"
                 "as 'memscribe window'), leaks, top call sites, a flame graph with a cost\n"
                 "selector and the size histogram.\n\n"
                 "options:\n"
                 "  -o, --output F  write to F (default: standard output; on a terminal, a\n"
                 "                  file named after the trace; -: standard output)\n"
                 "  --buckets N     time buckets a window selection snaps to (default 400,\n"
                 "                  at most 65534); window figures are exact for them\n"
                 "  --top N         rows per table (default 200; 0: all)\n"
                 "  --pid LIST      only these processes (comma-separated pids)\n"
                 "  --exe GLOB      only processes whose executable (name or path) matches\n"
                 "  --thread LIST   only blocks allocated by these threads (tids)\n"
                 "  --base B        compare with trace B: each summary number's change, and\n"
                 "                  per call site the change against B's site of the same\n"
                 "                  function chain (docs/diff.md)\n"
                 "  -h, --help      this text\n" CLI_ANA_PROGRAMS_USAGE CLI_SYM_USAGE
                 "\nExit status: 0 ok, 1 unreadable trace or failed write, 2 usage error.\n"
                 "See docs/html.md.\n");
}

int cmd_html(int argc, char **argv)
{
    static const struct option own[] = {
        {"buckets", required_argument, NULL, OPT_BUCKETS},
        {"base", required_argument, NULL, OPT_BASE},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_TOP | CLI_TAKES_PID | CLI_TAKES_THREAD |
                                    CLI_TAKES_SYM | CLI_TAKES_OUTPUT | CLI_TAKES_PROGRAMS,
                           .own = own,
                           .usage = usage};
    struct ana_html_options o = {0};
    const char *base_path = NULL;
    struct ana_html_base base = {0};
    struct cli_ana ba;
    struct cli_ana a;
    int c, rc;

    cli_ana_init(&a, "html", 200);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_BASE:
            base_path = optarg;
            break;
        case OPT_BUCKETS: {
            unsigned long n = cli_ana_number(&a, "--buckets", optarg);

            if (n < 1 || n > ANA_HTML_MAX_BUCKETS)
                cli_usage_error("html: --buckets wants 1 to %u, not '%s'", ANA_HTML_MAX_BUCKETS,
                                optarg);
            o.nr_buckets = (uint32_t)n;
            break;
        }
        }
    }
    if (base_path && !ana_filter_is_empty(&a.filter))
        cli_usage_error("html: --base compares whole traces; it does not go with --pid, --exe or "
                        "--thread");
    /* A tree's processes' stacks go as they end (cli_fold.h). */
    a.stacks_later = true;
    cli_ana_open(&a, argc, argv, optind);

    o.sym = cli_sym_options(&a.sym);
    o.nr_top = a.top;
    o.filter = &a.filter;
    /* The per-program view, but not beside a base (whose rows are per
     * process). */
    a.by_process |= base_path != NULL;
    cli_ana_programs(&a, NULL);
    o.programs = a.by_program ? &a.programs : NULL;
    /* Leak classes keep the blocks live at the end; a base compares
     * processes. */
    o.fold = cli_fold_can(&a, ana_reach_present(a.r) || base_path);
    o.let_go = ana_letgo_fn;
    o.let_go_arg = &a.letgo;
    char *path_copy = strdup(a.path);
    if (!path_copy)
        cli_die("html: out of memory");
    o.trace_name = basename(path_copy);
    o.progress = cli_ana_progress;
    o.progress_arg = &a;

    struct cli_output out;
    cli_output_open(&out, "html", a.output, a.path, ".html");
    if (base_path) {
        cli_diff_html_base(&a, base_path, &ba, &base);
        o.base = &base;
    }
    rc = ana_html_write(a.r, &o, out.f);
    cli_ana_progress_done(&a);
    rc = cli_output_close(&out, "html", rc);
    if (rc == -EIO || rc == -ENOSPC)
        cli_die("html: writing %s: %s", out.name, strerror(-rc));
    if (rc)
        cli_ana_fail(&a, rc);
    free(path_copy);
    if (base_path) {
        ana_model_destroy(base.model);
        cli_ana_close(&ba);
    }
    return cli_ana_close(&a);
}
