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
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_rows.h"

enum {
    OPT_BOTTOM_UP = CLI_ANA_OPT_FIRST_OWN,
    OPT_DEPTH,
    OPT_SORT,
    OPT_NO_SELF,
    OPT_FOCUS,
    OPT_FLAT,
    OPT_INDEX
};

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
                 "merged by name. With several processes, each is a first-level node\n"
                 "(each program, the processes of one executable merged, unless\n"
                 "--by-process).\n\n"
                 "options:\n"
                 "  --bottom-up     allocating functions at the root, callers below\n"
                 "  --depth N       fold frames deeper than N into their ancestor\n"
                 "                  (default 12; 0: no limit)\n"
                 "  --sort M        order children by peak (default), leaked, allocations,\n"
                 "                  bytes or temporary\n"
                 "  --no-self       only the inclusive columns\n"
                 "  --focus F       the tree of function F alone, F at its root: what F\n"
                 "                  calls on the way to allocations (its callees), or with\n"
                 "                  --bottom-up who calls F (its callers); F as tree or\n"
                 "                  report names it ('f', or 'f (file.c:12)')\n"
                 "  --flat          every function once, under the root: its inclusive cost\n"
                 "                  (every allocation with it on the stack, a recursion\n"
                 "                  counted once) and self cost, as heaptrack_gui's\n"
                 "                  Caller / Callee list (not with --bottom-up or --focus)\n"
                 "  --top N         children per node (default 10; 0: all)\n"
                 "  --index         from each chunk's totals (record --totals) and the\n"
                 "                  chunks where the heap peaked, not every event: the\n"
                 "                  same tree, in a fraction of the time; where the trace\n"
                 "                  cannot, a note on stderr says why and it is "
                 "replayed\n" CLI_ANA_PROGRAMS_USAGE CLI_ANA_USAGE
                 "\nA stack the recorder cut at its depth limit (record --depth) lacks its\n"
                 "root side: it hangs under one node '(stack cut at N frames)'.\n");
}

/* The paths of the call tree, one per call site with its numbers. */
struct paths {
    struct cli_ana *a;
    struct ana_tree t;
    bool bottom_up, per_process; /* per_process: a first-level node per process (not focused) */
    bool flat;                   /* --flat: each function once, under the root */
    /* --focus: the function's labels (as given, and its name before a
     * " (where)" as report writes frames); a path is kept from the first
     * of them on (from the root top-down, from the leaf bottom-up, so a
     * recursion counts once), a path without one is left out */
    bool focus;
    uint32_t focus_label[2];
    uint64_t nr_focused;
    int64_t total[NR_METS];
    uint32_t *labels;
    size_t cap;
};

/* --focus F: F's labels in the stacks' strings. */
static void focus_on(struct paths *ps, const char *f)
{
    struct ana_stacks *st = cli_ana_stacks(ps->a);
    const char *open = NULL;

    /* the last " (": the frame's place comes after the name */
    for (const char *q = strstr(f, " ("); q; q = strstr(q + 1, " ("))
        open = q;
    size_t n = open && f[strlen(f) - 1] == ')' ? (size_t)(open - f) : strlen(f);
    char *name = strndup(f, n);

    if (!name || ana_stacks_intern(st, f, &ps->focus_label[0]) ||
        ana_stacks_intern(st, name, &ps->focus_label[1]))
        cli_die("tree: out of memory");
    free(name);
    ps->focus = true;
}

static void add_site(struct paths *ps, uint32_t id, const struct ana_site *s)
{
    char name[320];
    uint32_t nl = 0, proc = 0, first = 0;

    if (ps->per_process && ps->a->by_program)
        cli_ana_program_name(ps->a, cli_rows_group(ps->a, CLI_ROWS_BY_PROGRAM, s->image), true,
                             name, sizeof(name));
    else if (ps->per_process)
        cli_ana_image_name(ps->a, s->image, name, sizeof(name));
    if (ps->per_process) {
        if (ana_stacks_intern(cli_ana_stacks(ps->a), name, &proc))
            cli_die("tree: out of memory");
        nl = 1;
    }
    nl = cli_ana_tree_path(ps->a, id, ps->bottom_up, &ps->labels, &ps->cap, nl);
    if (ps->flat) {
        int64_t v[NR_METS] = {(int64_t)s->peak_bytes, s->live_bytes, (int64_t)s->nr_allocs,
                              (int64_t)s->alloc_bytes, (int64_t)s->nr_temporary};
        for (int k = 0; k < NR_METS; k++)
            ps->total[k] += v[k];
        if (ana_tree_add_flat(&ps->t, ps->labels, nl, v))
            cli_die("tree: out of memory");
        return;
    }
    if (ps->per_process)
        ps->labels[0] = proc;
    if (ps->focus) {
        while (first < nl && ps->labels[first] != ps->focus_label[0] &&
               ps->labels[first] != ps->focus_label[1])
            first++;
        if (first == nl)
            return;
        ps->nr_focused++;
    }
    int64_t v[NR_METS] = {(int64_t)s->peak_bytes, s->live_bytes, (int64_t)s->nr_allocs,
                          (int64_t)s->alloc_bytes, (int64_t)s->nr_temporary};
    for (int k = 0; k < NR_METS; k++)
        ps->total[k] += v[k];
    if (ana_tree_add(&ps->t, ps->labels + first, nl - first, v))
        cli_die("tree: out of memory");
}

/* Every site with allocations or live blocks into the tree: the rows of
 * the per-program view, else each site. */
static void add_sites(struct paths *ps, const struct ana_model *m)
{
    struct cli_ana *a = ps->a;

    if (a->by_program) {
        struct cli_rows rows;
        cli_rows_answer(a, m, CLI_ROWS_BY_PROGRAM, &rows);
        for (uint32_t id = 0; id < rows.nr; id++) {
            const struct ana_site *s = rows.row[id];
            if (s && (s->nr_allocs || s->live_blocks))
                add_site(ps, cli_rows_stack(&rows, id), s);
        }
        cli_rows_release(&rows);
    }
    for (uint32_t id = 0; !a->by_program && id < ana_model_nr_sites(m); id++) {
        const struct ana_site *s = ana_model_site(m, id);
        if (s && (s->nr_allocs || s->live_blocks))
            add_site(ps, id, s);
    }
}

/* The text's last lines: the totals, and the depth limit. */
static void text_total(const struct cli_ana *a, const int64_t *total, bool temp, uint32_t depth)
{
    const char *e = ana_sample_mark(fmt_reader_sample_bytes(a->r)); /* estimates */
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

/* What the options ask. */
struct tree_opts {
    bool bottom_up, with_self, flat, index;
    const char *focus;
    uint32_t depth;
    unsigned sort;
};

static void parse_options(int argc, char **argv, struct cli_ana *a, struct tree_opts *o)
{
    static const struct option own[] = {
        {"bottom-up", no_argument, NULL, OPT_BOTTOM_UP},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"sort", required_argument, NULL, OPT_SORT},
        {"no-self", no_argument, NULL, OPT_NO_SELF},
        {"focus", required_argument, NULL, OPT_FOCUS},
        {"flat", no_argument, NULL, OPT_FLAT},
        {"index", no_argument, NULL, OPT_INDEX},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_ANALYSIS | CLI_TAKES_PROGRAMS, .own = own, .usage = usage};
    static const char *const sort_names[NR_METS + 1] = {"peak",  "leaked",    "allocations",
                                                        "bytes", "temporary", NULL};
    int c;

    *o = (struct tree_opts){.with_self = true, .depth = TREE_DEFAULT_DEPTH};
    while ((c = cli_getopt(&g, a, argc, argv)) != -1) {
        switch (c) {
        case OPT_BOTTOM_UP:
            o->bottom_up = true;
            break;
        case OPT_NO_SELF:
            o->with_self = false;
            break;
        case OPT_DEPTH:
            o->depth = (uint32_t)cli_ana_number(a, "--depth", optarg);
            break;
        case OPT_SORT:
            o->sort = cli_ana_choice(a, "sort", optarg, sort_names);
            break;
        case OPT_FLAT:
            o->flat = true;
            break;
        case OPT_INDEX:
            o->index = true;
            break;
        case OPT_FOCUS:
            if (!*optarg)
                cli_usage_error("tree: --focus wants a function's name");
            o->focus = optarg;
            break;
        }
    }
    if (o->flat && (o->bottom_up || o->focus))
        cli_usage_error("tree: --flat lists every function once: not with --%s",
                        o->bottom_up ? "bottom-up" : "focus");
    if (o->flat)
        o->depth = 0; /* one level: nothing folds */
}

int cmd_tree(int argc, char **argv)
{
    struct cli_ana a;
    struct tree_opts o;

    cli_ana_init(&a, "tree", 10);
    parse_options(argc, argv, &a, &o);
    a.stacks_later = true; /* it may fold a tree's processes (cli_fold.h) */
    cli_ana_open(&a, argc, argv, optind);
    /* JSON's nodes say their files and modules (the page's filter). */
    if (a.format == CLI_FMT_JSON)
        ana_stacks_keep_where(cli_ana_stacks(&a));
    /* A sampled trace's temporary allocations are not estimated: no
     * column, nothing to sort by (ana_sample.h). */
    bool temp = ana_sample_has_temporary(fmt_reader_sample_bytes(a.r));
    struct cli_tree_metric shown[NR_METS];
    memcpy(shown, mets, sizeof(shown));
    shown[NR_METS - 1].none = !temp;
    if (o.sort == NR_METS - 1)
        cli_ana_want_temporary(&a, "--sort temporary");

    struct ana_model_options mo = {.filter = &a.filter};
    /* The per-program view: a program's processes are one (their sites'
     * peak at the program's peak); on a tree, folded as each ends. */
    cli_ana_programs(&a, &mo);
    cli_fold_setup(&a, &mo, CLI_FOLD_TREE);
    /* The per-program view's rows read the programs' peaks' shares only:
     * the totals route then replays no process's own peak chunk (a
     * build's hundreds), as report's text. */
    struct ana_query q = {.mo = &mo,
                          .until_ns = UINT64_MAX,
                          .prefer_index = o.index,
                          .shares = a.by_program ? ANA_SHARES_PROGRAM : ANA_SHARES_EVERY};
    struct ana_model *m = cli_ana_answer(&a, &q);

    /* Several processes: each (or each program) is a first-level node, as
     * WPA's Process column groups first; the depth limit then counts it
     * too. Focused, the function is the root, in whichever process it
     * ran. */
    struct paths ps = {.a = &a, .bottom_up = o.bottom_up, .flat = o.flat};
    ps.per_process = ana_model_nr_seen(m) > 1 && !o.focus && !o.flat;
    if (o.focus)
        focus_on(&ps, o.focus);
    if (ana_tree_init(&ps.t, NR_METS, o.depth ? o.depth + ps.per_process : 0))
        cli_die("tree: out of memory");
    add_sites(&ps, m);
    if (o.focus && !ps.nr_focused)
        cli_warn("tree: %s: no allocation's stack holds '%s'", a.path, o.focus);
    if (ana_tree_sort(&ps.t, o.sort, ana_stacks_str_fn, cli_ana_stacks(&a)))
        cli_die("tree: out of memory");
    int64_t *total = ps.total;
    if (a.format == CLI_FMT_TEXT)
        printf("memscribe tree: %s (%s%s)\n\n", a.path,
               o.flat        ? "every function once"
               : !o.focus    ? (o.bottom_up ? "bottom-up" : "top-down")
               : o.bottom_up ? "callers of "
                             : "callees of ",
               o.focus ? o.focus : "");
    cli_ana_tree(&a, &ps.t, shown, NR_METS, o.with_self, stdout);
    if (a.format == CLI_FMT_TEXT)
        text_total(&a, total, temp, o.depth);
    free(ps.labels);
    ana_tree_release(&ps.t);
    ana_model_destroy(m);
    return cli_ana_close(&a);
}
