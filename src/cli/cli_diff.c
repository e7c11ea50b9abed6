/* SPDX-License-Identifier: MIT */
/* The base run of a differential flame graph (cli_diff.h). */
#include <stdlib.h>

#include "analysis/diff/ana_diff_flame.h"
#include "analysis/html/ana_html.h"
#include "analysis/model/ana_model.h"
#include "cli/cli.h"
#include "cli/cli_diff.h"

int64_t *cli_diff_flame_base(struct cli_ana *nw, const char *base_path, const struct ana_tree *t,
                             enum ana_flame_cost cost, int inverted)
{
    struct ana_model_options mo = {0};
    char *argv[] = {(char *)base_path, NULL};
    struct ana_model *m;
    struct ana_stacks *st;
    struct ana_tree tb;
    struct cli_ana b;
    int64_t *out = NULL;
    int rc;

    cli_ana_init(&b, nw->cmd, 0);
    b.sym = nw->sym;
    b.format = nw->format;
    cli_ana_open(&b, 1, argv, 0);
    if (cost == ANA_FLAME_TEMPORARY)
        cli_ana_want_temporary(&b, "--cost temporary");
    struct ana_scan_options so;
    cli_ana_scan_options(&b, UINT64_MAX, &so);
    rc = ana_model_build(&m, b.r, &mo, &so);
    cli_ana_progress_done(&b);
    if (rc)
        cli_ana_fail(&b, rc);
    st = cli_ana_stacks(&b);
    if ((rc = ana_tree_init(&tb, ANA_FLAME_NR_COSTS, 0)) ||
        (rc = ana_flame_build(&tb, m, st, inverted, NULL)) ||
        (rc = ana_flame_sort(&tb, ana_flame_stacks_name, st)) ||
        (rc = ana_diff_flame_match(t, ana_flame_stacks_name, cli_ana_stacks(nw), &tb,
                                   ana_flame_stacks_name, st, cost, &out)))
        cli_ana_fail(&b, rc);
    ana_tree_release(&tb);
    ana_model_destroy(m);
    cli_ana_close(&b);
    return out;
}

void cli_diff_html_base(struct cli_ana *nw, const char *path, struct cli_ana *b,
                        struct ana_html_base *out)
{
    struct ana_model_options mo = {0};
    char *argv[] = {(char *)path, NULL};

    cli_ana_init(b, nw->cmd, 0);
    b->sym = nw->sym;
    cli_ana_open(b, 1, argv, 0);
    out->trace_name = path;
    out->model = cli_ana_model(b, &mo, UINT64_MAX);
    out->stacks = cli_ana_stacks(b);
    fmt_reader_counts(b->r, &out->counts);
    out->sample_bytes = fmt_reader_sample_bytes(b->r);
}
