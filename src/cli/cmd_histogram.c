/* SPDX-License-Identifier: MIT */
/* memscribe histogram: allocation counts and bytes per power-of-two size
 * class from 1 byte, for the whole trace or per call site (--by-stack).
 * docs/histogram.md. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_histogram.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"

enum { OPT_BY_STACK = CLI_ANA_OPT_FIRST_OWN };

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe histogram [options] FILE\n\n"
                 "How many heap blocks of each size were allocated, and how many bytes,\n"
                 "in power-of-two size classes: 1, 2-3, 4-7, 8-15, ... (0 on its own).\n"
                 "One table per process.\n\n"
                 "options:\n"
                 "  --by-stack      one histogram per call site, the sites with most\n"
                 "                  allocations first (--top N of them, default 10)\n" CLI_ANA_USAGE
                     CLI_ANA_FRAMES_USAGE);
}

static const struct ana_column cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
    {"min", "min_size", ANA_CELL_U64},
    {"max", "max_size", ANA_CELL_U64},
    {"count", "count", ANA_CELL_U64 | ANA_CELL_EST},
    {"bytes", "bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"count, log scale", "bar", ANA_CELL_STR},
};

/* A bar of log2(count)+1 '#', a log-log view in text. */
static void bar(char *buf, size_t size, uint64_t n)
{
    size_t len = n ? 64u - (size_t)__builtin_clzll(n) : 0;

    if (len >= size)
        len = size - 1;
    memset(buf, '#', len);
    buf[len] = '\0';
}

/* The table shown: cols[] minus the stack column (without --by-stack) and
 * minus the bar (outside text). col[i] is cols[i]'s position, or -1. */
struct hist_table {
    struct ana_table *t;
    struct ana_column use[7];
    int col[7];
};

static void set_u64(struct hist_table *ht, unsigned i, uint64_t v)
{
    if (ht->col[i] >= 0)
        ana_table_set_u64(ht->t, (unsigned)ht->col[i], v);
}

static void add_rows(struct cli_ana *a, struct hist_table *ht, uint32_t pid, uint32_t stack,
                     bool with_stack, const struct ana_histogram *h, uint32_t image)
{
    char b[80];
    unsigned nr;

    for (unsigned cls = 0; cls < ANA_NR_SIZE_CLASSES; cls++) {
        const struct ana_hist_bin *bin =
            with_stack ? ana_histogram_stack(h, stack, cls) : &ana_histogram_image(h, image)[cls];
        if (!bin || !bin->nr)
            continue;
        uint64_t lo, hi;
        ana_size_class_bounds(cls, &lo, &hi);
        if (ana_table_add_row(ht->t))
            cli_die("histogram: out of memory");
        set_u64(ht, 0, pid);
        if (ht->col[1] >= 0) {
            const char *const *fr =
                cli_ana_stack(a, stack, false, a->format == CLI_FMT_TEXT ? 3 : 0, &nr);
            ana_table_set_stack(ht->t, (unsigned)ht->col[1], fr, nr, a->interest);
        }
        set_u64(ht, 2, lo);
        set_u64(ht, 3, hi);
        set_u64(ht, 4, bin->nr);
        set_u64(ht, 5, bin->bytes);
        if (ht->col[6] >= 0) {
            bar(b, sizeof(b), bin->nr);
            ana_table_set_str(ht->t, (unsigned)ht->col[6], b);
        }
    }
}

int cmd_histogram(int argc, char **argv)
{
    static const struct option own[] = {
        {"by-stack", no_argument, NULL, OPT_BY_STACK},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_ANALYSIS | CLI_TAKES_FRAMES, .own = own, .usage = usage};
    struct cli_ana a;
    bool by_stack = false;
    int c;

    cli_ana_init(&a, "histogram", 10);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        if (c == OPT_BY_STACK)
            by_stack = true;
    }
    a.stacks_later = !by_stack; /* none read but by --by-stack */
    cli_ana_open(&a, argc, argv, optind);

    struct ana_histogram h;
    struct ana_heap_replay p;
    int rc;
    ana_histogram_init(&h, by_stack);
    ana_heap_replay_init(&p, &(struct ana_step_options){.filter = &a.filter});
    if ((rc = ana_histogram_subscribe(&h, &p)))
        cli_ana_fail(&a, rc);
    cli_ana_run(&a, &p, UINT64_MAX);
    ana_heap_replay_release(&p);

    /* Columns: the stack column only with --by-stack, the bar only in text. */
    struct hist_table ht;
    unsigned nc = 0;
    for (unsigned i = 0; i < 7; i++) {
        ht.col[i] = -1;
        if ((i == 1 && !by_stack) || (i == 6 && a.format != CLI_FMT_TEXT))
            continue;
        ht.col[i] = (int)nc;
        ht.use[nc++] = cols[i];
    }
    if (ana_table_create(&ht.t, ht.use, nc))
        cli_die("histogram: out of memory");
    struct ana_hist_site *st = NULL;
    for (uint32_t im = 0; im < h.nr_images && !by_stack; im++) {
        const struct fmt_image_info *ii = fmt_reader_image(a.r, im);
        add_rows(&a, &ht, ii ? ii->pid : 0, 0, false, &h, im); /* no rows if no blocks */
    }
    if (by_stack) {
        /* Sites by number of allocations; then each one's classes. */
        long nst = ana_histogram_sites(&h, &st);
        if (nst < 0)
            cli_die("histogram: out of memory");
        for (long i = 0; i < nst && (!a.top || i < (long)a.top); i++) {
            const struct fmt_image_info *ii = fmt_reader_image(a.r, st[i].image);
            add_rows(&a, &ht, ii ? ii->pid : 0, st[i].stack, true, &h, st[i].image);
        }
    }
    /* The bars grow by a '#' per doubling of the count: say so, or a
     * class of 1000 blocks reads as three times one of 8. */
    if (a.format == CLI_FMT_TEXT)
        printf("memscribe histogram: %s\n"
               "bars: log scale, log2(count) + 1 '#' (1: #, 2-3: ##, 4-7: ###, ...)\n\n",
               a.path);
    cli_ana_table(&a, ht.t, stdout, "", true);
    ana_table_destroy(ht.t);
    free(st);
    ana_histogram_release(&h);
    return cli_ana_close(&a);
}
