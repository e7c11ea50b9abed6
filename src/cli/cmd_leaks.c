/* SPDX-License-Identifier: MIT */
/* memscribe leaks: heap blocks still live at the end of the trace (or at
 * --at T), grouped by stack with count and bytes, largest first; --all
 * lists each block (serial, address, size, time, thread). docs/leaks.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_attach.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_time.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_reach.h"
#include "analysis/plan/ana_plan_fold.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_heaps.h"
#include "cli/cli_rows.h"
#include "util/util_sort.h"

enum { OPT_AT = CLI_ANA_OPT_FIRST_OWN, OPT_ALL, OPT_INDEX };

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe leaks [options] FILE\n\n"
                 "Heap blocks still allocated at the end of the trace (or at --at T),\n"
                 "grouped by the stack that allocated them, largest first.\n\n"
                 "options:\n"
                 "  --at T          live at time T instead of the end: 1.5s, 250ms, peak,\n"
                 "                  end, peak-10ms, ...\n"
                 "  --all           list every live block: serial, address, size, time, thread\n"
                 "  --top N         stacks (or blocks) to list (default 20; 0: all)\n"
                 "  --index         answer from the trace's chunk summaries and the one chunk\n"
                 "                  that holds T, not a replay from the start: fast on a large\n"
                 "                  trace; trusts the summaries (memscribe dump --verify checks\n"
                 "                  them). Not with --all or classes\n" CLI_ANA_USAGE
                     CLI_ANA_FRAMES_USAGE CLI_ANA_SUPP_USAGE CLI_ANA_PROGRAMS_USAGE
                 "\nStacks are printed leaf first (the allocating function first).\n");
}

static const struct ana_column group_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"bytes", "leaked_bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"blocks", "leaked_blocks", ANA_CELL_U64 | ANA_CELL_EST},
    {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
};
/* The per-program view's rows: the processes of one executable merged. */
static const struct ana_column program_cols[] = {
    {"program", "exe", ANA_CELL_STR},
    {"bytes", "leaked_bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"blocks", "leaked_blocks", ANA_CELL_U64 | ANA_CELL_EST},
    {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
};
/* With reachability classes (record --reach, at the end): the rows' bytes
 * and blocks of each class, in ana_reach_order, before the stack. */
static const struct ana_column class_cols[] = {
    {"definite", "definitely_lost_bytes", ANA_CELL_U64},
    {"blocks", "definitely_lost_blocks", ANA_CELL_U64},
    {"indirect", "indirectly_lost_bytes", ANA_CELL_U64},
    {"blocks", "indirectly_lost_blocks", ANA_CELL_U64},
    {"possible", "possibly_lost_bytes", ANA_CELL_U64},
    {"blocks", "possibly_lost_blocks", ANA_CELL_U64},
    {"reachable", "still_reachable_bytes", ANA_CELL_U64},
    {"blocks", "still_reachable_blocks", ANA_CELL_U64},
};
#define NR_CLASS_COLS (sizeof(class_cols) / sizeof(class_cols[0]))
static const struct ana_column block_cols[] = {
    {"pid", "pid", ANA_CELL_U64},         {"serial", "serial", ANA_CELL_U64},
    {"address", "address", ANA_CELL_STR}, {"size", "size", ANA_CELL_U64 | ANA_CELL_EST},
    {"time", "time", ANA_CELL_STR},       {"time_ns", "time_ns", ANA_CELL_U64},
    {"thread", "tid", ANA_CELL_U64},      {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
    {"class", "class", ANA_CELL_STR},
};

struct leaks {
    struct cli_ana a;
    struct ana_time_point at; /* --at (default: the end) */
    bool all;                 /* --all: a row per block */
    uint64_t t;               /* the moment, in the trace */
    struct ana_model *m;
    struct ana_heaps heaps; /* a trace with pools: the leaks of each heap */
    struct ana_table *tab;  /* the rows */
    struct ana_table *sup;  /* rows of suppressed stacks (not with --all) */
    bool classes;           /* the trace has reachability classes */
    uint64_t reach_at;      /* each image's scan at or before it counts (UINT64_MAX: the end) */
    struct ana_reach reach;
};

static void parse(struct leaks *lk, int argc, char **argv)
{
    static const struct option own[] = {
        {"at", required_argument, NULL, OPT_AT},
        {"all", no_argument, NULL, OPT_ALL},
        {"index", no_argument, NULL, OPT_INDEX},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_ANALYSIS | CLI_JSON_NOTES | CLI_TAKES_FRAMES |
                                    CLI_TAKES_SUPP | CLI_TAKES_PROGRAMS,
                           .own = own,
                           .usage = usage};
    int c;

    lk->at = (struct ana_time_point){.base = ANA_TIME_END};
    cli_ana_init(&lk->a, "leaks", 20);
    while ((c = cli_getopt(&g, &lk->a, argc, argv)) != -1) {
        switch (c) {
        case OPT_AT:
            if (ana_time_parse_point(optarg, &lk->at))
                cli_usage_error("leaks: --at wants a time like 1.5s, 250ms, peak or end, not "
                                "'%s'",
                                optarg);
            break;
        case OPT_ALL:
            lk->all = true;
            break;
        case OPT_INDEX:
            lk->a.index = true;
            break;
        }
    }
    lk->a.stacks_later = true; /* it may fold the tree's processes (cli_fold.h) */
    cli_ana_open(&lk->a, argc, argv, optind);
}

static int any_block(void *arg, const struct ana_block *b)
{
    (void)arg;
    (void)b;
    return 1;
}

/* --all on a tree: a process ended, its blocks among the first kept (the
 * model's blocks_first). Its stacks are let go if it has none; else kept
 * to be read at the end, when the pass's buffers are gone: symbolizing
 * them now would add the symbolizer's memory to the pass's (25 MiB on a
 * build), and only the first processes to end have such blocks (later
 * ones' come after them). */
static int all_retire(void *arg, const struct ana_model *m, uint32_t image)
{
    const struct ana_scope *s = ana_model_image(m, image);

    if (!s->ended || ana_model_each_block_of(m, image, any_block, NULL))
        return 0;
    return ana_letgo_image(arg, image, s->end_ns);
}

/* --all: the model keeps every live block; on a build's tree (--top N,
 * no leak classes, which need every block) each process, as it ends,
 * only its blocks among the first N of all, and its sites and stacks go.
 * Otherwise every stack is read now. */
static void all_setup(struct leaks *lk, struct ana_model_options *mo)
{
    struct cli_ana *a = &lk->a;

    if (lk->classes || !a->top || fmt_reader_nr_images(a->r) < ana_plan_fold_min_images() ||
        fmt_reader_nr_pools(a->r) || !ana_plan_fold_trace(a->r)) {
        int rc = fmt_reader_load_stacks(a->r);
        if (rc)
            cli_ana_fail(a, rc);
        return;
    }
    mo->blocks_first = (uint32_t)a->top;
    mo->retire = (struct ana_model_retire){all_retire, &a->letgo, ana_letgo_fn};
}

/* --all: a row per live block, oldest first. */
static void block_rows(struct leaks *lk)
{
    struct cli_ana *a = &lk->a;
    struct ana_block *b;
    char buf[64];
    unsigned nr;
    long n = ana_model_blocks(lk->m, &b);

    if (n < 0)
        cli_ana_fail(a, (int)n);
    if (ana_table_create(&lk->tab, block_cols,
                         sizeof(block_cols) / sizeof(block_cols[0]) - !lk->classes))
        cli_die("leaks: out of memory");
    for (long i = 0; i < n && (!a->top || i < (long)a->top); i++) {
        const struct ana_scope *s = ana_model_image(lk->m, b[i].image);
        ana_table_add_row(lk->tab);
        ana_table_set_u64(lk->tab, 0, s ? s->pid : 0);
        ana_table_set_u64(lk->tab, 1, b[i].serial);
        snprintf(buf, sizeof(buf), "0x%" PRIx64, b[i].addr);
        ana_table_set_str(lk->tab, 2, buf);
        ana_table_set_u64(lk->tab, 3, b[i].size);
        ana_table_set_str(lk->tab, 4, ana_time_format(b[i].ts_ns, buf, sizeof(buf)));
        ana_table_set_u64(lk->tab, 5, b[i].ts_ns);
        ana_table_set_u64(lk->tab, 6, b[i].tid);
        const char *const *fr =
            cli_ana_stack(a, b[i].stack, false, a->format == CLI_FMT_TEXT ? 1 : 0, &nr);
        ana_table_set_stack(lk->tab, 7, fr, nr, a->interest);
        if (lk->classes)
            ana_table_set_str(
                lk->tab, 8,
                ana_reach_title(ana_reach_class_of(a->r, b[i].image, b[i].serial, lk->reach_at)));
    }
    free(b);
}

/* The columns of a row per stack: cols, with the classes' before the stack. */
static int stack_table(struct leaks *lk, const struct ana_column *cols, struct ana_table **out)
{
    /* The table keeps the columns it is given: one copy per kind of row. */
    static struct ana_column with_classes[2][3 + NR_CLASS_COLS + 1];
    struct ana_column *all = with_classes[cols == program_cols];

    if (!lk->classes)
        return ana_table_create(out, cols, 4);
    memcpy(all, cols, 3 * sizeof(*cols));
    memcpy(all + 3, class_cols, sizeof(class_cols));
    all[3 + NR_CLASS_COLS] = cols[3];
    return ana_table_create(out, all, 3 + NR_CLASS_COLS + 1);
}

/* Rows by leaked bytes, then by the lowest stack id among each row's
 * sites with live blocks: the same order whichever sites without them the
 * model holds (leaks --index holds fewer than the replay). */
struct tie {
    const struct ana_site *const *row;
    uint32_t *live_id; /* by row id */
};

/* The order of two rows a and b, the lowest stacks with live blocks la
 * and lb: the one order of the tables and of the rows kept at a fold. */
static int leak_order(const struct ana_site *a, uint32_t la, const struct ana_site *b, uint32_t lb)
{
    if (a->live_bytes != b->live_bytes)
        return a->live_bytes < b->live_bytes ? 1 : -1;
    return (la > lb) - (la < lb);
}

static int cmp_leaked(const void *x, const void *y, void *arg)
{
    const struct tie *t = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

    return leak_order(t->row[a], t->live_id[a], t->row[b], t->live_id[b]);
}

static int cmp_fold_leaked(const void *x, const void *y, void *arg)
{
    const struct ana_fold_row *rows = arg;
    const struct ana_fold_row *a = &rows[*(const uint32_t *)x], *b = &rows[*(const uint32_t *)y];

    return leak_order(&a->s, a->live_stack, &b->s, b->live_stack);
}

/* An image folded without the per-program view (ana_fold_keep_fn): the
 * rows the table can list kept, its first --top leaks by cmp_leaked's
 * order and every suppressed one (listed apart, all). */
static int keep_rows(void *arg, uint32_t image, const struct ana_fold_row *rows, uint32_t n,
                     bool *keep)
{
    const struct leaks *lk = arg;
    uint32_t *ids = malloc(((size_t)n + 1) * sizeof(*ids)), k = 0;

    (void)image;
    if (!ids)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i].s.live_blocks <= 0)
            continue;
        if (rows[i].tag)
            keep[i] = true;
        else
            ids[k++] = i;
    }
    util_sort_first(ids, k, sizeof(*ids), lk->a.top, cmp_fold_leaked, (void *)rows);
    for (uint32_t i = 0; i < k && (!lk->a.top || i < lk->a.top); i++)
        keep[ids[i]] = true;
    free(ids);
    return 0;
}

/* A row per stack (call sites that read the same merged: cli_rows.h),
 * largest first; the runtime's one-time allocations in a list of their
 * own. */
static void stack_rows(struct leaks *lk)
{
    struct cli_ana *a = &lk->a;
    struct cli_rows rows;
    const struct ana_column *cols = a->by_program ? program_cols : group_cols;
    uint32_t n = 0;
    unsigned nr;
    char exe[4 * 1024 + 1];

    cli_rows_answer(a, lk->m, a->by_program ? CLI_ROWS_BY_PROGRAM : CLI_ROWS_BY_IMAGE, &rows);
    uint32_t *ids = malloc(((size_t)rows.nr + 1) * sizeof(*ids));
    /* A fold keeps each row's lowest stack with live blocks; a model's
     * rows find it from their sites. */
    uint32_t *live_id = rows.live_stack ? NULL : calloc((size_t)rows.nr + 1, sizeof(uint32_t));
    struct tie tie = {rows.row, rows.live_stack ? rows.live_stack : live_id};
    if (!ids || !tie.live_id)
        cli_die("leaks: out of memory");
    for (uint32_t id = rows.nr; id-- > 0;) {
        const struct ana_site *s = live_id ? ana_model_site(lk->m, id) : NULL;
        if (s && s->live_blocks > 0 && rows.first[id] != UINT32_MAX)
            live_id[rows.first[id]] = id;
        if (rows.row[id] && rows.row[id]->live_blocks > 0)
            ids[n++] = id;
    }
    qsort_r(ids, n, sizeof(*ids), cmp_leaked, &tie);
    free(live_id);
    struct ana_reach_sum *cls = lk->classes ? cli_rows_reach(&rows, rows.nr, &lk->reach) : NULL;
    if (stack_table(lk, cols, &lk->tab) || stack_table(lk, cols, &lk->sup))
        cli_die("leaks: out of memory");
    cli_ana_supp_load(a);
    /* the rows shown: those that would read alike show more of their stacks */
    uint32_t *stacks = malloc(((size_t)n + 1) * sizeof(*stacks)), nr_shown = 0;
    if (!stacks)
        cli_die("leaks: out of memory");
    for (uint32_t i = 0, shown = 0; i < n; i++)
        if (cli_rows_suppressed(a, &rows, ids[i]) || !a->top || shown++ < a->top)
            stacks[nr_shown++] = cli_rows_stack(&rows, ids[i]);
    cli_ana_apart(a, stacks, nr_shown, CLI_ANA_TEXT_FRAMES);
    free(stacks);
    for (uint32_t i = 0, shown = 0; i < n; i++) {
        const struct ana_site *s = rows.row[ids[i]];
        uint32_t stack = cli_rows_stack(&rows, ids[i]);
        struct ana_table *to = cli_rows_suppressed(a, &rows, ids[i]) ? lk->sup : lk->tab;
        if (to == lk->tab && a->top && shown++ >= a->top)
            continue;
        ana_table_add_row(to);
        if (a->by_program) {
            ana_table_set_str(
                to, 0, cli_ana_program_exe(a, a->programs.of_image[s->image], exe, sizeof(exe)));
        } else {
            ana_table_set_u64(to, 0, ana_model_image(lk->m, s->image)->pid);
        }
        ana_table_set_u64(to, 1, (uint64_t)s->live_bytes);
        ana_table_set_u64(to, 2, (uint64_t)s->live_blocks);
        cli_rows_set_se(a, to, s, 0, (struct cli_rows_se_cols){-1, 1, 2, -1, -1});
        for (unsigned c = 0; cls && c < 4; c++) {
            ana_table_set_u64(to, 3 + 2 * c, cls[ids[i]].bytes[ana_reach_order[c]]);
            ana_table_set_u64(to, 4 + 2 * c, cls[ids[i]].blocks[ana_reach_order[c]]);
        }
        const char *const *fr = cli_ana_stack(
            a, stack, false, a->format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
        ana_table_set_stack(to, lk->classes ? 3 + NR_CLASS_COLS : 3, fr, nr, a->interest);
    }
    free(ids);
    free(cls);
    cli_rows_release(&rows);
}

/* An image's leaks by class, or why it has none; a scan made while the
 * program ran on (a detach, a request) says when. */
static void classes_text(struct leaks *lk, uint32_t image, FILE *out)
{
    const struct fmt_reach_info *ri = ana_reach_find(lk->a.r, image, lk->reach_at);
    const struct ana_reach_sum *sum = &lk->reach.image[image];
    char buf[64];

    if (!ri) {
        fprintf(out, lk->reach_at == UINT64_MAX
                         ? "  leak classes: not scanned (ended without the scan: killed, exec'd, "
                           "or a Windows program)\n"
                         : "  leak classes: no scan at or before this moment\n");
        return;
    }
    if (ri->status != FMT_REACH_SCANNED) {
        fprintf(out, "  leak classes: unavailable: %s\n", ri->reason);
        return;
    }
    fprintf(out, "  ");
    if (!ana_reach_at_exit(lk->a.r, ri))
        fprintf(out, "scan at %s: ", ana_time_format(ri->ts_ns, buf, sizeof(buf)));
    for (unsigned c = 0; c < 4; c++) {
        unsigned k = ana_reach_order[c];
        fprintf(out, "%s%s %" PRIu64 " bytes in %" PRIu64 " blocks", c ? ", " : "",
                ana_reach_title(k), sum->bytes[k], sum->blocks[k]);
    }
    if (sum->blocks[FMT_REACH_UNKNOWN])
        fprintf(out, ", unclassed %" PRIu64 " bytes in %" PRIu64 " blocks",
                sum->bytes[FMT_REACH_UNKNOWN], sum->blocks[FMT_REACH_UNKNOWN]);
    fputc('\n', out);
}

/* An image's leaks by class in JSON: "reach": null without a scan. */
static void classes_json(struct leaks *lk, uint32_t image, struct ana_json *j)
{
    const struct fmt_reach_info *ri = ana_reach_find(lk->a.r, image, lk->reach_at);
    const struct ana_reach_sum *sum = &lk->reach.image[image];

    ana_json_key(j, "reach");
    if (!ri) {
        ana_json_null(j);
        return;
    }
    ana_json_begin_object(j);
    ana_json_kv_str(j, "status", ri->status == FMT_REACH_SCANNED ? "scanned" : "unavailable");
    ana_json_kv_str(j, "reason", ri->reason);
    ana_json_kv_u64(j, "scan_ns", ri->ts_ns);
    ana_json_kv_bool(j, "at_exit", ana_reach_at_exit(lk->a.r, ri));
    for (unsigned k = 0; k < FMT_NR_REACH; k++) {
        char key[64];
        snprintf(key, sizeof(key), "%s_bytes", ana_reach_key(k));
        ana_json_kv_u64(j, key, sum->bytes[k]);
        snprintf(key, sizeof(key), "%s_blocks", ana_reach_key(k));
        ana_json_kv_u64(j, key, sum->blocks[k]);
    }
    ana_json_end_object(j);
}

static void write_text(struct leaks *lk, FILE *out)
{
    struct cli_ana *a = &lk->a;
    char buf[64], name[256];

    fprintf(out, "memscribe leaks: %s: live at %s%s\n", a->path,
            ana_time_format(lk->t, buf, sizeof(buf)),
            lk->at.base == ANA_TIME_END && !lk->at.offset_ns ? " (the end)" : "");
    const char *e = ana_sample_mark(fmt_reader_sample_bytes(a->r)); /* estimates */
    for (uint32_t k = 0; a->by_program && k < ana_model_nr_programs(lk->m); k++) {
        const struct ana_scope *s = ana_model_program(lk->m, k);
        const struct ana_program *pg = &a->programs.v[k];
        if (!s->seen || pg->nr_images < 2)
            continue;
        cli_ana_program_name(a, k, false, name, sizeof(name));
        fprintf(out, "%s: %s%" PRIu64 " bytes in %s%" PRIu64 " blocks\n", name, e, s->heap, e,
                s->live_blocks);
    }
    for (uint32_t i = 0; i < ana_model_nr_images(lk->m); i++) {
        const struct ana_scope *s = ana_model_image(lk->m, i);
        if (!s->seen || (a->by_program && a->programs.v[a->programs.of_image[i]].nr_images > 1))
            continue;
        cli_ana_image_name(a, i, name, sizeof(name));
        fprintf(out, "%s: %s%" PRIu64 " bytes in %s%" PRIu64 " blocks\n", name, e, s->heap, e,
                s->live_blocks);
        if (lk->classes)
            classes_text(lk, i, out);
        cli_heaps_leaks_text(a, &lk->heaps, i, out);
    }
    if (!ana_model_nr_seen(lk->m))
        fprintf(out, "no events of the selected processes (--pid)\n");
    if (ana_table_nr_rows(lk->tab)) {
        fputc('\n', out);
        cli_ana_table(a, lk->tab, out, "", true);
        if (lk->classes)
            fprintf(out,
                    ana_reach_all_at_exit(lk->a.r, lk->m, UINT32_MAX, lk->reach_at)
                        ? "\nclasses at exit: %s\n"
                        : "\nclasses of the last scan at or before the moment "
                          "shown (a scan while the program ran on: its blocks "
                          "were live then, not leaked): %s\n",
                    ana_reach_legend);
    }
    if (lk->sup && ana_table_nr_rows(lk->sup)) {
        fprintf(out, "\nlisted apart, the runtime's one-time allocations (suppressions; "
                     "--no-default-suppressions lists them above):\n");
        cli_ana_table(a, lk->sup, out, "", true);
    }
}

/* On standard output, as cli_ana_json_begin() starts it. */
static void write_json(struct leaks *lk)
{
    struct cli_ana *a = &lk->a;
    struct ana_json j;

    cli_ana_json_begin(a, &j);
    ana_json_kv_u64(&j, "at_ns", lk->t);
    ana_json_key(&j, "processes");
    ana_json_begin_array(&j);
    for (uint32_t i = 0; i < ana_model_nr_images(lk->m); i++) {
        const struct ana_scope *s = ana_model_image(lk->m, i);
        if (!s->seen)
            continue;
        ana_json_begin_object(&j);
        cli_ana_image_json(a, &j, i);
        /* ended by then: leaked_* are its leaks, else blocks live then
         * (report's "leaked:" or "live at the end:") */
        ana_json_kv_bool(&j, "ended", s->ended);
        ana_json_kv_u64(&j, "leaked_bytes", s->heap);
        ana_json_kv_u64(&j, "leaked_blocks", s->live_blocks);
        if (lk->classes)
            classes_json(lk, i, &j);
        cli_heaps_json(a, &lk->heaps, i, &j);
        ana_json_end_object(&j);
    }
    ana_json_end_array(&j);
    if (a->by_program) {
        ana_json_key(&j, "programs");
        ana_json_begin_array(&j);
        for (uint32_t k = 0; k < ana_model_nr_programs(lk->m); k++) {
            const struct ana_scope *s = ana_model_program(lk->m, k);
            if (!s->seen)
                continue;
            ana_json_begin_object(&j);
            cli_ana_program_json(a, &j, k);
            ana_json_kv_bool(&j, "ended", s->ended);
            ana_json_kv_u64(&j, "leaked_bytes", s->heap);
            ana_json_kv_u64(&j, "leaked_blocks", s->live_blocks);
            ana_json_end_object(&j);
        }
        ana_json_end_array(&j);
    }
    ana_json_key(&j, lk->all ? "blocks" : "stacks");
    ana_table_write_json(lk->tab, &j);
    if (lk->sup) {
        ana_json_key(&j, "suppressed");
        ana_table_write_json(lk->sup, &j);
    }
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("leaks: writing the output failed");
}

int cmd_leaks(int argc, char **argv)
{
    struct leaks lk = {0};

    parse(&lk, argc, argv);
    lk.t = cli_ana_cut(&lk.a, "--at", cli_ana_time(&lk.a, "--at", &lk.at), true);
    /* Each image's last scan at or before the moment shown: at the end, its
     * last (at exit, or record -p's detach); at T, one made on request. */
    lk.classes = ana_reach_present(lk.a.r);
    lk.reach_at = lk.at.base == ANA_TIME_END && !lk.at.offset_ns ? UINT64_MAX : lk.t;
    struct ana_model_options mo = {.filter = &lk.a.filter, .keep_blocks = lk.all || lk.classes};
    if (lk.all) {
        all_setup(&lk, &mo);
    } else {
        cli_ana_programs(&lk.a, &mo);
        /* Its tables are the per-program view's, or without it rows by
         * process, each process's kept at its end (keep_rows). */
        lk.a.fold_alone = !lk.a.by_program;
        if (cli_fold_setup(&lk.a, &mo, CLI_FOLD_ROWS) && !lk.a.by_program) {
            lk.a.fold->calls.image_rows = keep_rows;
            lk.a.fold->calls.image_arg = &lk;
        }
    }
    /* A moment's live state: from the index where --index asks and the
     * trace allows (ana_plan.h). */
    struct ana_query q = {
        .mo = &mo, .until_ns = lk.t, .need = ANA_NEED_LIVE, .prefer_index = lk.a.index};
    lk.m = cli_ana_answer(&lk.a, &q);
    if (lk.classes && ana_reach_build_at(&lk.reach, lk.a.r, lk.m, lk.reach_at))
        cli_die("leaks: out of memory");
    cli_heaps_load(&lk.a, &lk.heaps, lk.t);
    if (lk.all)
        block_rows(&lk);
    else
        stack_rows(&lk);

    if (lk.a.format == CLI_FMT_TEXT)
        write_text(&lk, stdout);
    else if (lk.a.format == CLI_FMT_CSV)
        cli_ana_table(&lk.a, lk.tab, stdout, "", true);
    else
        write_json(&lk);
    ana_table_destroy(lk.tab);
    ana_table_destroy(lk.sup);
    ana_heaps_release(&lk.heaps);
    ana_reach_release(&lk.reach);
    ana_model_destroy(lk.m);
    return cli_ana_close(&lk.a);
}
