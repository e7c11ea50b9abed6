/* SPDX-License-Identifier: MIT */
/* memscribe tree: the call tree with inclusive and self cost per function
 * (allocations, bytes, leaked, peak contribution, temporary), top-down from
 * main or bottom-up from the allocating functions, with a depth limit.
 * docs/tree.md. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_scan.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_tree.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"

enum { OPT_BOTTOM_UP = CLI_ANA_OPT_FIRST_OWN, OPT_DEPTH, OPT_SORT, OPT_NO_SELF };

static const struct cli_tree_metric mets[] = {
    {"peak", "peak_bytes", false},    {"leaked", "leaked_bytes", false},
    {"allocs", "allocations", false}, {"bytes", "allocated_bytes", false},
    {"temp", "temporary", false},
};
#define NR_METS 5
/* Levels shown unless --depth says otherwise: main and a few below it
 * after the start-up frames; deeper ones fold into their ancestor. */
#define TREE_DEFAULT_DEPTH 12

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe tree [options] FILE\n\n"
                 "The call tree of every heap allocation, with inclusive cost (the node\n"
                 "and everything it calls) and self cost (allocations made right there):\n"
                 "peak (live bytes at the peak of heap in use), leaked (live at the end),\n"
                 "allocations, bytes allocated, temporary allocations. Functions are\n"
                 "merged by name. With several processes, each is a first-level node.\n\n"
                 "options:\n"
                 "  --bottom-up     allocating functions at the root, callers below\n"
                 "  --depth N       fold frames deeper than N into their ancestor\n"
                 "                  (default 12; 0: no limit)\n"
                 "  --sort M        order children by peak (default), leaked, allocations,\n"
                 "                  bytes or temporary\n"
                 "  --no-self       only the inclusive columns\n"
                 "  --top N         children per node (default 10; 0: all)\n" CLI_ANA_USAGE
                 "\nA stack the recorder cut at its depth limit (record --depth) lacks its\n"
                 "root side: it hangs under one node '(stack cut at N frames)'.\n");
}

int cmd_tree(int argc, char **argv)
{
    static const struct option own[] = {
        {"bottom-up", no_argument, NULL, OPT_BOTTOM_UP},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"sort", required_argument, NULL, OPT_SORT},
        {"no-self", no_argument, NULL, OPT_NO_SELF},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_ANALYSIS, .own = own, .usage = usage};
    static const char *const sort_names[NR_METS + 1] = {"peak",  "leaked",    "allocations",
                                                        "bytes", "temporary", NULL};
    struct cli_ana a;
    bool bottom_up = false, with_self = true;
    uint32_t depth = TREE_DEFAULT_DEPTH;
    unsigned sort = 0;
    int c;

    cli_ana_init(&a, "tree", 10);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_BOTTOM_UP:
            bottom_up = true;
            break;
        case OPT_NO_SELF:
            with_self = false;
            break;
        case OPT_DEPTH:
            depth = (uint32_t)cli_ana_number(&a, "--depth", optarg);
            break;
        case OPT_SORT:
            sort = cli_ana_choice(&a, "sort", optarg, sort_names);
            break;
        }
    }
    cli_ana_open(&a, argc, argv, optind);
    /* A sampled trace's temporary allocations are not estimated: no
     * column, nothing to sort by (ana_sample.h). */
    bool temp = ana_sample_has_temporary(fmt_reader_sample_bytes(a.r));
    struct cli_tree_metric shown[NR_METS];
    memcpy(shown, mets, sizeof(shown));
    shown[NR_METS - 1].none = !temp;
    if (sort == NR_METS - 1)
        cli_ana_want_temporary(&a, "--sort temporary");

    struct ana_model_options mo = {.filter = &a.filter};
    struct ana_model *m = cli_ana_model(&a, &mo, UINT64_MAX);

    /* Several processes: each is a first-level node, as WPA's Process
     * column groups first; the depth limit then counts it too. */
    bool per_process = ana_model_nr_seen(m) > 1;
    struct ana_stacks *st = cli_ana_stacks(&a);
    struct ana_tree t;
    if (ana_tree_init(&t, NR_METS, depth ? depth + per_process : 0))
        cli_die("tree: out of memory");
    uint32_t *labels = NULL;
    size_t cap = 0;
    char name[256];
    int64_t total[NR_METS] = {0};
    for (uint32_t id = 0; id < ana_model_nr_sites(m); id++) {
        const struct ana_site *s = ana_model_site(m, id);
        if (!s || (!s->nr_allocs && !s->live_blocks))
            continue;
        uint32_t nl = 0, proc = 0;
        if (per_process) {
            cli_ana_image_name(&a, s->image, name, sizeof(name));
            if (ana_stacks_intern(st, name, &proc))
                cli_die("tree: out of memory");
            nl = 1;
        }
        nl = cli_ana_tree_path(&a, id, bottom_up, &labels, &cap, nl);
        if (per_process)
            labels[0] = proc;
        int64_t v[NR_METS] = {(int64_t)s->peak_bytes, s->live_bytes, (int64_t)s->nr_allocs,
                              (int64_t)s->alloc_bytes, (int64_t)s->nr_temporary};
        for (int k = 0; k < NR_METS; k++)
            total[k] += v[k];
        if (ana_tree_add(&t, labels, nl, v))
            cli_die("tree: out of memory");
    }
    if (ana_tree_sort(&t, sort))
        cli_die("tree: out of memory");
    if (a.format == CLI_FMT_TEXT)
        printf("memscribe tree: %s (%s)\n\n", a.path, bottom_up ? "bottom-up" : "top-down");
    cli_ana_tree(&a, &t, shown, NR_METS, with_self, stdout);
    if (a.format == CLI_FMT_TEXT) {
        const char *e = ana_sample_mark(fmt_reader_sample_bytes(a.r)); /* estimates */
        char tmp[64] = "temporary " ANA_SAMPLE_NO_TEMPORARY;

        if (temp)
            snprintf(tmp, sizeof(tmp), "%" PRId64 " temporary", total[4]);
        printf("\ntotal: peak %s%" PRId64 " bytes, leaked %s%" PRId64 " bytes, %s%" PRId64
               " allocations of %s%" PRId64 " bytes, %s\n",
               e, total[0], e, total[1], e, total[2], e, total[3], tmp);
        if (depth)
            printf("(at most %u levels: deeper frames are in their ancestor's self columns; "
                   "--depth 0 shows all)\n",
                   depth);
    }
    free(labels);
    ana_tree_release(&t);
    ana_model_destroy(m);
    return cli_ana_close(&a);
}
