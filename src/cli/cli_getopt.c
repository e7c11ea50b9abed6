/* SPDX-License-Identifier: MIT */
/* The shared option loop of the analysis subcommands (see cli_getopt.h). */
#include "cli/cli_getopt.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Each shared option with the CLI_TAKES_ bit that brings it. */
static const struct {
    unsigned bit;
    struct option opt;
} shared[] = {
    {CLI_TAKES_FORMAT, {"format", required_argument, NULL, CLI_ANA_OPT_FORMAT}},
    {CLI_TAKES_TOP, {"top", required_argument, NULL, CLI_ANA_OPT_TOP}},
    {CLI_TAKES_PID, {"pid", required_argument, NULL, CLI_ANA_OPT_PID}},
    {CLI_TAKES_PID, {"exe", required_argument, NULL, CLI_ANA_OPT_EXE}},
    {CLI_TAKES_THREAD, {"thread", required_argument, NULL, CLI_ANA_OPT_THREAD}},
    {CLI_TAKES_OUTPUT, {"output", required_argument, NULL, 'o'}},
    {0, {"help", no_argument, NULL, 'h'}},
    {CLI_TAKES_SYM, {"debug-dir", required_argument, NULL, CLI_SYM_OPT_DEBUG_DIR}},
    {CLI_TAKES_SYM, {"sysroot", required_argument, NULL, CLI_SYM_OPT_SYSROOT}},
    {CLI_TAKES_SYM, {"all-frames", no_argument, NULL, CLI_SYM_OPT_ALL_FRAMES}},
    {CLI_TAKES_SYM, {"raw", no_argument, NULL, CLI_SYM_OPT_RAW}},
    {CLI_TAKES_SYM, {"full-names", no_argument, NULL, CLI_SYM_OPT_FULL_NAMES}},
    {CLI_TAKES_SYM, {"verbose", no_argument, NULL, CLI_SYM_OPT_VERBOSE}},
    {CLI_TAKES_SYM, {"symbol-path", required_argument, NULL, CLI_SYM_OPT_SYMBOL_PATH}},
    {CLI_TAKES_SYM, {"alloc-fn", required_argument, NULL, CLI_SYM_OPT_ALLOC_FN}},
    {CLI_TAKES_FRAMES, {"frames", required_argument, NULL, CLI_ANA_OPT_FRAMES}},
    {CLI_TAKES_SUPP, {"suppress", required_argument, NULL, CLI_ANA_OPT_SUPPRESS}},
    {CLI_TAKES_SUPP, {"lsan-suppressions", required_argument, NULL, CLI_ANA_OPT_LSAN_SUPP}},
    {CLI_TAKES_SUPP, {"no-default-suppressions", no_argument, NULL, CLI_ANA_OPT_NO_DEFAULT_SUPP}},
    {CLI_TAKES_PROGRAMS, {"by-process", no_argument, NULL, CLI_ANA_OPT_BY_PROCESS}},
};
#define NR_SHARED (sizeof(shared) / sizeof(shared[0]))

static struct option *build(const struct cli_getopt *g, const char *cmd)
{
    size_t nr_own = 0, k = 0;

    while (g->own && g->own[nr_own].name)
        nr_own++;
    struct option *all = calloc(nr_own + NR_SHARED + 1, sizeof(*all));
    if (!all)
        cli_die("%s: out of memory", cmd);
    for (size_t i = 0; i < nr_own; i++)
        all[k++] = g->own[i];
    for (size_t i = 0; i < NR_SHARED; i++) {
        if (!shared[i].bit || (g->takes & shared[i].bit))
            all[k++] = shared[i].opt;
    }
    return all;
}

/* Does the command handle option value c itself? */
static bool owns(const struct cli_getopt *g, int c)
{
    for (const struct option *o = g->own; o && o->name; o++)
        if (o->val == c)
            return true;
    return false;
}

int cli_getopt(struct cli_getopt *g, struct cli_ana *a, int argc, char **argv)
{
    /* Options may come before or after the operands in every command
     * (getopt permutes them; "--" ends them). A command that lists -o
     * among its own options gets each one (export pairs them with --to). */
    const char *shortopts = g->takes & CLI_TAKES_OUTPUT || owns(g, 'o') ? "ho:" : "h";
    int c;

    if (!g->all) {
        g->all = build(g, a->cmd);
        opterr = 0;
    }
    for (;;) {
        c = getopt_long(argc, argv, shortopts, g->all, NULL);
        if (c == -1) {
            free(g->all);
            g->all = NULL;
            if (g->takes & CLI_JSON_NOTES && a->format == CLI_FMT_JSON)
                a->notes_in_output = true;
            return -1;
        }
        if (c == 'h') {
            g->usage(stdout);
            exit(CLI_EXIT_OK);
        }
        if (c == '?' || c == ':')
            cli_usage_error("%s: unknown or incomplete option '%s'; see 'memscribe %s --help'",
                            a->cmd, argv[optind - 1], a->cmd);
        if (owns(g, c))
            return c;
        if (c == 'o') {
            a->output = optarg;
            continue;
        }
        if (!cli_ana_option(a, c, optarg))
            cli_usage_error("%s: unknown or incomplete option '%s'; see 'memscribe %s --help'",
                            a->cmd, argv[optind - 1], a->cmd);
    }
}
