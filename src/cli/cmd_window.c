/* SPDX-License-Identifier: MIT */
/* memscribe window: Windows Performance Analyzer's heap table for a time
 * window [--from, --to]: rows grouped by stack, thread, function or size
 * class, with Impacting Type (Transient, Impacting), Count, Size and
 * Impacting Size; top-down or bottom-up; as rows or as a call tree.
 * docs/window.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_attach.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_time.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_tree.h"
#include "analysis/model/ana_window.h"
#include "analysis/plan/ana_plan_fold.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_rows.h"
#include "util/util_array.h"

enum {
    OPT_FROM = CLI_ANA_OPT_FIRST_OWN,
    OPT_TO,
    OPT_BY,
    OPT_SORT,
    OPT_BOTTOM_UP,
    OPT_TREE,
    OPT_DEPTH,
    OPT_INDEX,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe window [options] FILE\n\n"
                 "The heap table of Windows Performance Analyzer for a time window: every\n"
                 "block is AIFI (allocated inside, freed inside), AIFO (allocated inside,\n"
                 "outstanding at the end), AOFI (allocated before, freed inside) or AOFO.\n"
                 "Impacting Type: Transient = AIFI; Impacting = AIFO and AOFI. Count:\n"
                 "allocations; Size: bytes allocated inside the window; Impacting Size:\n"
                 "sum(AIFO) - sum(AOFI), the change of outstanding memory over the window.\n\n"
                 "options:\n"
                 "  --from T        window start (default start): 1.5s, 250ms, peak, end,\n"
                 "                  peak-100ms, ... (times count from the trace start)\n"
                 "  --to T          window end, included (default end)\n"
                 "  --by KEY        rows per stack (default), function (the allocating\n"
                 "                  function), thread, size-class or heap (Windows\n"
                 "                  traces: the heap handle, WPA's Handle column; Linux:\n"
                 "                  malloc, or the name of the program's own pool,\n"
                 "                  memscribe/annotate.h)\n"
                 "  --sort COL      impacting (|Impacting Size|, default), size or count\n"
                 "  --bottom-up     with --tree, the allocating functions are the roots\n"
                 "  --tree          a call tree of the window instead of rows (top-down\n"
                 "                  from main unless --bottom-up)\n"
                 "  --depth N       tree depth limit (default 0: none)\n"
                 "  --top N         rows, or children per tree node (default 20; 0: all)\n"
                 "  --index         what is live at the start from the trace's chunk summaries,\n"
                 "                  then the events from the chunk of the start only: fast on a\n"
                 "                  large trace; trusts the summaries (memscribe dump --verify\n"
                 "                  checks them)\n" CLI_ANA_USAGE CLI_ANA_FRAMES_USAGE);
}

enum by { BY_STACK, BY_FUNCTION, BY_THREAD, BY_SIZE_CLASS, BY_HEAP };
enum sort { SORT_IMPACTING, SORT_SIZE, SORT_COUNT };
static const char *const by_names[] = {"stack", "function", "thread", "size-class", "heap", NULL};
static const char *const sort_names[] = {"impacting", "size", "count", NULL};

struct row {
    uint32_t image;
    uint64_t key; /* stack id, function string id, thread index or size class */
    uint32_t tid;
    bool transient;
    uint64_t count;
    uint64_t size;
    int64_t impacting;
    /* Of an Impacting row's count: blocks allocated before the window and
     * ended inside it (AOFI), and of them those a realloc ended. */
    uint64_t aofi, aofi_realloc;
};

/* What an Impacting row holding AOFI blocks is, its count allocated
 * before the window (so no size, and their bytes off impacting size):
 * text's label after "Impacting" and its legend, JSON's "what". */
enum row_what { WHAT_NONE, WHAT_AOFI, WHAT_AOFI_REALLOC, NR_WHAT };
static const char *const what_label[NR_WHAT] = {"", " (AOFI)", " (AOFI realloc)"};
static const char *const what_text[NR_WHAT] = {
    NULL,
    "its count holds blocks allocated before the window and freed inside it: they add no size, "
    "and their bytes come off impacting size",
    "its count holds blocks allocated before the window that a realloc inside it resized or "
    "moved: they add no size, their bytes come off impacting size, and the new block is counted "
    "in the realloc's own row",
};

static enum row_what row_what(const struct row *r)
{
    return r->transient || !r->aofi ? WHAT_NONE : r->aofi_realloc ? WHAT_AOFI_REALLOC : WHAT_AOFI;
}

static int by_sort(const void *x, const void *y, void *arg)
{
    const struct row *a = x, *b = y;
    enum sort s = *(const enum sort *)arg;
    uint64_t va, vb;

    switch (s) {
    case SORT_SIZE:
        va = a->size, vb = b->size;
        break;
    case SORT_COUNT:
        va = a->count, vb = b->count;
        break;
    default:
        va = a->impacting < 0 ? (uint64_t)0 - (uint64_t)a->impacting : (uint64_t)a->impacting;
        vb = b->impacting < 0 ? (uint64_t)0 - (uint64_t)b->impacting : (uint64_t)b->impacting;
        if (va == vb)
            va = a->size, vb = b->size;
    }
    if (va != vb)
        return va < vb ? 1 : -1;
    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (int)b->transient - (int)a->transient;
}

struct rows {
    struct row *v;
    size_t nr, cap;
};

static void push(struct rows *rs, uint32_t image, uint64_t key, uint32_t tid,
                 const struct ana_wpa *c, uint64_t aofi_realloc)
{
    for (int tr = 1; tr >= 0; tr--) {
        uint64_t count = tr ? ana_wpa_transient_count(c) : ana_wpa_impacting_count(c);
        if (!count)
            continue;
        if (UTIL_ARRAY_RESERVE(rs->v, rs->cap, (size_t)rs->nr + 1, 256))
            cli_die("window: out of memory");
        struct row *r = &rs->v[rs->nr++];
        r->image = image;
        r->key = key;
        r->tid = tid;
        r->transient = tr;
        r->count = count;
        r->size = tr ? c->bytes[ANA_AIFI] : c->bytes[ANA_AIFO];
        r->impacting = tr ? 0 : ana_wpa_impacting_size(c);
        r->aofi = tr ? 0 : c->nr[ANA_AOFI];
        r->aofi_realloc = tr ? 0 : aofi_realloc;
    }
}

/* Rows of stack keys merged by their allocating function (by_function),
 * or by the frames the row shows (cli_rows.h; the row keeps its lowest
 * stack id, whose frames it prints). */
static void merge_rows(struct cli_ana *a, const struct ana_window_key *k, long n, bool by_function,
                       struct rows *rs)
{
    struct ana_map m;

    ana_map_init(&m, sizeof(struct ana_window_key));
    for (long i = 0; i < n; i++) {
        uint32_t fn;
        if (by_function) {
            int rc = ana_stacks_leaf(cli_ana_stacks(a), (uint32_t)k[i].key, &fn);
            if (rc)
                cli_ana_fail(a, rc);
        } else {
            fn = cli_rows_key(a, (uint32_t)k[i].key);
        }
        int created;
        struct ana_window_key *f = ana_map_put(&m, ((uint64_t)k[i].image << 32 | fn) + 1, &created);
        if (!f)
            cli_die("window: out of memory");
        if (by_function)
            f->key = fn;
        else if (created || k[i].key < f->key)
            f->key = k[i].key;
        f->image = k[i].image;
        for (int c = 0; c < ANA_NR_WPA; c++) {
            f->c.nr[c] += k[i].c.nr[c];
            f->c.bytes[c] += k[i].c.bytes[c];
        }
        f->nr_aofi_realloc += k[i].nr_aofi_realloc;
    }
    for (size_t i = 0; i < m.cap; i++)
        if (ana_map_slot_key(&m, i)) {
            const struct ana_window_key *f = ana_map_slot_val(&m, i);
            push(rs, f->image, f->key, 0, &f->c, f->nr_aofi_realloc);
        }
    ana_map_release(&m);
}

static const struct cli_tree_metric tree_mets[] = {
    {"impacting size", "impacting_size", false},
    {"size", "size", false},
    {"count", "count", false},
    {"transient", "transient_count", false},
    {"impacting", "impacting_count", false},
};

/* Add the keys' paths to t (a stack with blocks only from before the
 * window and past it, AOFO, has nothing in it: no node, as no row). */
static void tree_add(struct cli_ana *a, struct ana_tree *t, const struct ana_window_key *k, long n,
                     bool bottom_up)
{
    uint32_t *labels = NULL;
    size_t cap = 0;

    for (long i = 0; i < n; i++) {
        const struct ana_wpa *c = &k[i].c;
        if (!ana_wpa_transient_count(c) && !ana_wpa_impacting_count(c))
            continue;
        uint32_t nl = cli_ana_tree_path(a, (uint32_t)k[i].key, bottom_up, &labels, &cap, 0);
        int64_t m[5] = {ana_wpa_impacting_size(c),
                        (int64_t)(c->bytes[ANA_AIFI] + c->bytes[ANA_AIFO]),
                        (int64_t)(c->nr[ANA_AIFI] + c->nr[ANA_AIFO] + c->nr[ANA_AOFI]),
                        (int64_t)ana_wpa_transient_count(c), (int64_t)ana_wpa_impacting_count(c)};
        if (ana_tree_add(t, labels, nl, m))
            cli_die("window: out of memory");
    }
    free(labels);
}

static void write_tree(struct cli_ana *a, struct ana_tree *t, struct ana_window_key *k, long n,
                       bool bottom_up, enum sort sort)
{
    tree_add(a, t, k, n, bottom_up);
    if (ana_tree_sort(t,
                      sort == SORT_SIZE    ? 1
                      : sort == SORT_COUNT ? 2
                                           : 0,
                      ana_stacks_str_fn, cli_ana_stacks(a)))
        cli_die("window: out of memory");
    cli_ana_tree(a, t, tree_mets, 5, false, stdout);
}

static const char *const class_name[ANA_NR_WPA] = {"aifi", "aifo", "aofi", "aofo"};

struct window {
    struct cli_ana a;
    struct ana_time_point from, to;
    enum by by;
    enum sort sort;
    bool bottom_up, tree;
    uint32_t depth;
    uint64_t t0, t1; /* the window, in the trace */
    struct ana_window w;
    struct ana_window_key *keys;
    long nr_keys;
    struct ana_tree t;         /* --tree: the paths, each process's added as it ends */
    struct rows rows;          /* not --tree: the rows, sorted */
    struct ana_column cols[9]; /* their columns (the table keeps a pointer to them) */
    struct ana_table *tab;     /* not --tree: the rows shown */
    bool said[NR_WHAT];        /* the kinds of rows shown, for text's legend */
};

static void parse_option(struct window *wn, int c)
{
    switch (c) {
    case OPT_FROM:
    case OPT_TO:
        if (ana_time_parse_point(optarg, c == OPT_FROM ? &wn->from : &wn->to))
            cli_usage_error("window: --%s wants a time like 1.5s, 250ms, peak or end, not "
                            "'%s'",
                            c == OPT_FROM ? "from" : "to", optarg);
        break;
    case OPT_BY:
        wn->by = (enum by)cli_ana_choice(&wn->a, "by", optarg, by_names);
        break;
    case OPT_SORT:
        wn->sort = (enum sort)cli_ana_choice(&wn->a, "sort", optarg, sort_names);
        break;
    case OPT_BOTTOM_UP:
        wn->bottom_up = true;
        break;
    case OPT_TREE:
        wn->tree = true;
        break;
    case OPT_DEPTH:
        wn->depth = (uint32_t)cli_ana_number(&wn->a, "--depth", optarg);
        break;
    case OPT_INDEX:
        wn->a.index = true;
        break;
    }
}

static void parse(struct window *wn, int argc, char **argv)
{
    static const struct option own[] = {
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"by", required_argument, NULL, OPT_BY},
        {"sort", required_argument, NULL, OPT_SORT},
        {"bottom-up", no_argument, NULL, OPT_BOTTOM_UP},
        {"tree", no_argument, NULL, OPT_TREE},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"index", no_argument, NULL, OPT_INDEX},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_ANALYSIS | CLI_JSON_NOTES | CLI_TAKES_FRAMES,
                           .own = own,
                           .usage = usage};
    int c;

    wn->from = (struct ana_time_point){.base = ANA_TIME_START};
    wn->to = (struct ana_time_point){.base = ANA_TIME_END};
    cli_ana_init(&wn->a, "window", 20);
    while ((c = cli_getopt(&g, &wn->a, argc, argv)) != -1)
        parse_option(wn, c);
    if (wn->tree && (wn->by == BY_THREAD || wn->by == BY_SIZE_CLASS || wn->by == BY_HEAP))
        cli_usage_error("window: --tree shows stacks; it does not go with --by %s",
                        by_names[wn->by]);
    /* Caught before clamping to the trace, which could hide it. */
    if (wn->from.base == wn->to.base && wn->from.offset_ns > wn->to.offset_ns)
        cli_usage_error("window: --to is before --from");
    /* Its rows and trees by stack may fold a tree's processes as they end
     * (with --index too: retire_of): their stacks are decoded as needed
     * and let go (cli_fold.h); rows by thread, size class or heap read no
     * stack at all. */
    wn->a.stacks_later = ana_plan_fold_wanted();
    cli_ana_open(&wn->a, argc, argv, optind);
    /* A JSON tree's nodes say their files and modules (the page's filter). */
    if (wn->tree && wn->a.format == CLI_FMT_JSON)
        ana_stacks_keep_where(cli_ana_stacks(&wn->a));
    if (wn->by == BY_HEAP && !fmt_reader_pe(wn->a.r) && !fmt_reader_pools(wn->a.r))
        cli_die("window: %s: --by heap needs a trace of a Windows program (heap handles) or one "
                "recorded with pools (format 1.4, memscribe record)",
                wn->a.path);
}

/* A process ended: its paths into the tree, its stacks let go. */
static int tree_retire(void *arg, const struct ana_window *w, uint32_t image,
                       const struct ana_window_key *keys, size_t n, uint64_t end_ns)
{
    struct window *wn = arg;

    (void)w;
    tree_add(&wn->a, &wn->t, keys, (long)n, wn->bottom_up);
    return ana_letgo_image(&wn->a.letgo, image, end_ns);
}

/* A process ended (rows by stack or function): its rows made and, with
 * --top, cut to its first --top (rows of two processes are never one, so
 * the first --top of all are among those), their frames kept; its stacks
 * let go. */
static int rows_retire(void *arg, const struct ana_window *w, uint32_t image,
                       const struct ana_window_key *keys, size_t n, uint64_t end_ns)
{
    struct window *wn = arg;
    struct cli_ana *a = &wn->a;
    struct rows own = {0};
    int rc = 0;

    (void)w;
    merge_rows(a, keys, (long)n, wn->by == BY_FUNCTION, &own);
    if (own.nr)
        qsort_r(own.v, own.nr, sizeof(*own.v), by_sort, &wn->sort);
    for (size_t i = 0; i < own.nr && (!a->top || i < a->top) && !rc; i++) {
        if (UTIL_ARRAY_RESERVE(wn->rows.v, wn->rows.cap, wn->rows.nr + 1, 256))
            rc = -ENOMEM;
        else if (wn->by == BY_STACK && (rc = cli_fold_keep_frames(a, (uint32_t)own.v[i].key)))
            break;
        else
            wn->rows.v[wn->rows.nr++] = own.v[i];
    }
    free(own.v);
    return rc ? rc : ana_letgo_image(&a->letgo, image, end_ns);
}

/* The retire callback of the window's pass, if any: --tree's, or rows by
 * stack or function when the trace's stacks are decoded as needed. */
static ana_window_retire_fn *retire_of(const struct window *wn)
{
    if (!wn->a.stacks_later)
        return NULL;
    if (wn->tree)
        return tree_retire;
    return wn->by == BY_STACK || wn->by == BY_FUNCTION ? rows_retire : NULL;
}

/* The window's blocks, classified and grouped by wn->by. */
static void compute(struct window *wn)
{
    static const enum ana_window_by wby[] = {
        [BY_STACK] = ANA_WINDOW_BY_STACK,   [BY_FUNCTION] = ANA_WINDOW_BY_STACK,
        [BY_THREAD] = ANA_WINDOW_BY_THREAD, [BY_SIZE_CLASS] = ANA_WINDOW_BY_SIZE_CLASS,
        [BY_HEAP] = ANA_WINDOW_BY_HEAP,
    };
    struct cli_ana *a = &wn->a;
    int rc;

    wn->t0 = cli_ana_time(a, "--from", &wn->from);
    wn->t1 = cli_ana_time(a, "--to", &wn->to);
    if (wn->t1 < wn->t0)
        cli_usage_error("window: the window ends (%" PRIu64 " ns) before it starts (%" PRIu64
                        " ns)",
                        wn->t1, wn->t0);
    const char *why = NULL;
    char err[600] = "";
    /* A few processes (a program and its shell) keep their keys to the
     * end, read in parallel ranges; a tree's retire as they end, in one. */
    bool tree = fmt_reader_nr_images(a->r) >= ana_plan_fold_min_images();
    struct ana_window_ranges rg = {a->path, cli_ana_jobs(), cli_ana_range_events(),
                                   tree ? retire_of(wn) : NULL, wn};
    /* Read from the chunk of t0: what ended before it has no row. */
    const struct fmt_chunk_info *first =
        fmt_reader_chunk(a->r, fmt_reader_find_chunk(a->r, wn->t0));
    if (a->index && rg.retire && first && (rc = ana_letgo_before(&a->letgo, first->first_ts_ns)))
        cli_ana_fail(a, rc);
    rc = a->index
             ? ana_window_compute_index(&wn->w, a->r, &rg, &a->filter, wn->t0, wn->t1, wby[wn->by],
                                        cli_ana_progress, a, &why, err, sizeof(err))
             : -ENOTSUP;
    if (rc == -EPROTO || rc == -EIO)
        cli_die("window: %s", err[0] ? err : a->path);
    if (rc == -ENOTSUP) {
        if (a->index) {
            cli_warn("window: --index: %s; replaying the trace", why);
            ana_window_release(&wn->w);
        }
        rc = ana_window_compute_retire(&wn->w, a->r, &a->filter, wn->t0, wn->t1, wby[wn->by],
                                       retire_of(wn), wn, cli_ana_progress, a);
    }
    if (rc)
        cli_ana_fail(a, rc);
    cli_ana_progress_done(a);
    /* An aggregated trace's window: out to the cuts around it. */
    wn->t0 = wn->w.t0_ns;
    wn->t1 = wn->w.t1_ns;
    if ((wn->nr_keys = ana_window_keys(&wn->w, &wn->keys)) < 0)
        cli_ana_fail(a, (int)wn->nr_keys);
}

/* The key column of row r. */
static void set_key(struct window *wn, unsigned col, const struct row *r)
{
    struct cli_ana *a = &wn->a;
    struct ana_table *t = wn->tab;
    uint64_t lo, hi;
    char b[64];
    unsigned nr;

    switch (wn->by) {
    case BY_STACK: {
        const char *const *fr = cli_ana_stack(
            a, (uint32_t)r->key, false, a->format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
        ana_table_set_stack(t, col, fr, nr, a->interest);
        break;
    }
    case BY_FUNCTION:
        ana_table_set_str(t, col, ana_stacks_str(cli_ana_stacks(a), (uint32_t)r->key));
        break;
    case BY_THREAD:
        ana_table_set_u64(t, col, r->tid);
        break;
    case BY_SIZE_CLASS:
        ana_size_class_bounds((unsigned)r->key, &lo, &hi);
        snprintf(b, sizeof(b), "%" PRIu64 "-%" PRIu64, lo, hi);
        ana_table_set_str(t, col, b);
        break;
    case BY_HEAP:
        if (fmt_reader_pe(a->r)) {
            snprintf(b, sizeof(b), "0x%" PRIx64, r->key);
        } else { /* a Linux trace's heap id: malloc's, or a pool's name */
            const struct ana_heap *hp = &wn->w.heaps.v[r->key];
            ana_heap_name(a->r, hp->image, hp->handle, b, sizeof(b));
        }
        ana_table_set_str(t, col, b);
        break;
    }
}

/* The rows (not --tree): merged, sorted, the first --top in a table. */
static void make_rows(struct window *wn)
{
    static const char *const key_title[] = {"stack", "function", "thread", "size class", "handle"};
    static const char *const key_json[] = {"stack", "function", "tid", "size_class", "heap"};
    struct cli_ana *a = &wn->a;
    enum by by = wn->by;

    if (by == BY_FUNCTION || by == BY_STACK)
        merge_rows(a, wn->keys, wn->nr_keys, by == BY_FUNCTION, &wn->rows);
    else
        for (long i = 0; i < wn->nr_keys; i++)
            push(&wn->rows, wn->keys[i].image, wn->keys[i].key, wn->keys[i].tid, &wn->keys[i].c,
                 wn->keys[i].nr_aofi_realloc);
    if (wn->rows.nr)
        qsort_r(wn->rows.v, wn->rows.nr, sizeof(*wn->rows.v), by_sort, &wn->sort);
    const struct ana_column cols[] = {
        {"pid", "pid", ANA_CELL_U64},
        {"type", "impacting_type", ANA_CELL_STR},
        {"count", "count", ANA_CELL_U64 | ANA_CELL_EST},
        {"size", "size", ANA_CELL_U64 | ANA_CELL_EST},
        {"impacting size", "impacting_size", ANA_CELL_I64 | ANA_CELL_EST},
        {by == BY_HEAP && !fmt_reader_pe(a->r) ? "heap" : key_title[by], key_json[by],
         by == BY_STACK    ? ANA_CELL_LIST | ANA_CELL_INTEREST
         : by == BY_THREAD ? ANA_CELL_U64
                           : ANA_CELL_STR},
    };
    /* JSON and CSV say what a row is in columns of their own; text after
     * its type, with a legend (write_legend). */
    const struct ana_column more[] = {
        {"aofi", "aofi", ANA_CELL_U64 | ANA_CELL_EST},
        {"aofi realloc", "aofi_realloc", ANA_CELL_U64 | ANA_CELL_EST},
        {"what", "what", ANA_CELL_STR},
    };
    bool text = a->format == CLI_FMT_TEXT;
    memcpy(wn->cols, cols, sizeof(cols));
    memcpy(wn->cols + 6, more, sizeof(more));
    if (ana_table_create(&wn->tab, wn->cols, text ? 6 : 9))
        cli_die("window: out of memory");
    size_t n = a->top && a->top < wn->rows.nr ? a->top : wn->rows.nr;
    if (by == BY_STACK) { /* rows that would read alike show more of their stacks */
        uint32_t *stacks = malloc((n + 1) * sizeof(*stacks));
        if (!stacks)
            cli_die("window: out of memory");
        for (size_t i = 0; i < n; i++)
            stacks[i] = (uint32_t)wn->rows.v[i].key;
        cli_ana_apart(a, stacks, (unsigned)n, CLI_ANA_TEXT_FRAMES);
        free(stacks);
    }
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &wn->rows.v[i];
        const struct fmt_image_info *ii = fmt_reader_image(a->r, r->image);
        enum row_what what = row_what(r);
        char type[48];
        ana_table_add_row(wn->tab);
        ana_table_set_u64(wn->tab, 0, ii ? ii->pid : 0);
        snprintf(type, sizeof(type), "%s%s", r->transient ? "Transient" : "Impacting",
                 text ? what_label[what] : "");
        ana_table_set_str(wn->tab, 1, type);
        ana_table_set_u64(wn->tab, 2, r->count);
        ana_table_set_u64(wn->tab, 3, r->size);
        ana_table_set_i64(wn->tab, 4, r->impacting);
        set_key(wn, 5, r);
        wn->said[what] = true;
        if (text)
            continue;
        ana_table_set_u64(wn->tab, 6, r->aofi);
        ana_table_set_u64(wn->tab, 7, r->aofi_realloc);
        if (what_text[what])
            ana_table_set_str(wn->tab, 8, what_text[what]);
        else
            ana_table_set_none(wn->tab, 8);
    }
}

/* Text: under the rows, what each label after a type means. */
static void write_legend(const struct window *wn, FILE *out)
{
    bool first = true;

    for (int w = WHAT_AOFI; w < NR_WHAT; w++) {
        if (!wn->said[w])
            continue;
        fprintf(out, "%sImpacting%s: %s\n", first ? "\n" : "", what_label[w], what_text[w]);
        first = false;
    }
}

/* Text: the window and each process's classes, before the rows. */
static void write_text_head(struct window *wn, FILE *out)
{
    struct cli_ana *a = &wn->a;
    char b0[64], b1[64], name[256];

    fprintf(out, "memscribe window: %s: from %s to %s\n", a->path,
            ana_time_format(wn->t0, b0, sizeof(b0)), ana_time_format(wn->t1, b1, sizeof(b1)));
    if (wn->w.rounded)
        fprintf(out, "(an aggregated trace: the window asked, %s to %s, rounded out to its cuts)\n",
                ana_time_format(wn->w.asked_t0_ns, b0, sizeof(b0)),
                ana_time_format(wn->w.asked_t1_ns, b1, sizeof(b1)));
    for (uint32_t i = 0; i < wn->w.nr_images; i++) {
        if (!wn->w.image_seen[i])
            continue;
        const struct ana_wpa *s = &wn->w.images[i];
        const char *e = ana_sample_mark(fmt_reader_sample_bytes(a->r)); /* estimates */

        cli_ana_image_name(a, i, name, sizeof(name));
        fprintf(out,
                "%s: Transient %s%" PRIu64 " blocks %s%" PRIu64 " bytes; Impacting %s%" PRIu64
                " blocks, Impacting Size %s%" PRId64 " bytes\n",
                name, e, ana_wpa_transient_count(s), e, s->bytes[ANA_AIFI], e,
                ana_wpa_impacting_count(s), e, ana_wpa_impacting_size(s));
        fprintf(out,
                "  AIFI %s%" PRIu64 " (%s%" PRIu64 " B)  AIFO %s%" PRIu64 " (%s%" PRIu64
                " B)  AOFI %s%" PRIu64 " (%s%" PRIu64 " B)  AOFO %s%" PRIu64 " (%s%" PRIu64 " B)\n",
                e, s->nr[ANA_AIFI], e, s->bytes[ANA_AIFI], e, s->nr[ANA_AIFO], e,
                s->bytes[ANA_AIFO], e, s->nr[ANA_AOFI], e, s->bytes[ANA_AOFI], e, s->nr[ANA_AOFO],
                e, s->bytes[ANA_AOFO]);
    }
    fputc('\n', out);
}

/* On standard output, as cli_ana_json_begin() starts it. */
static void write_json(struct window *wn)
{
    struct cli_ana *a = &wn->a;
    struct ana_json j;

    cli_ana_json_begin(a, &j);
    ana_json_kv_u64(&j, "from_ns", wn->t0);
    ana_json_kv_u64(&j, "to_ns", wn->t1);
    if (wn->w.rounded) {
        ana_json_kv_u64(&j, "asked_from_ns", wn->w.asked_t0_ns);
        ana_json_kv_u64(&j, "asked_to_ns", wn->w.asked_t1_ns);
    }
    ana_json_kv_u64(&j, "events_read", wn->w.nr_events_read);
    ana_json_key(&j, "processes");
    ana_json_begin_array(&j);
    for (uint32_t i = 0; i < wn->w.nr_images; i++) {
        if (!wn->w.image_seen[i])
            continue;
        const struct ana_wpa *s = &wn->w.images[i];
        ana_json_begin_object(&j);
        cli_ana_image_json(a, &j, i);
        for (int k = 0; k < ANA_NR_WPA; k++) {
            char key[32];
            ana_json_kv_u64(&j, class_name[k], s->nr[k]);
            snprintf(key, sizeof(key), "%s_bytes", class_name[k]);
            ana_json_kv_u64(&j, key, s->bytes[k]);
        }
        ana_json_kv_i64(&j, "impacting_size", ana_wpa_impacting_size(s));
        ana_json_end_object(&j);
    }
    ana_json_end_array(&j);
    ana_json_key(&j, "rows");
    ana_table_write_json(wn->tab, &j);
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("window: writing the output failed");
}

int cmd_window(int argc, char **argv)
{
    struct window wn = {0};

    parse(&wn, argc, argv);
    if (wn.tree && ana_tree_init(&wn.t, 5, wn.depth))
        cli_die("window: out of memory");
    compute(&wn);
    if (wn.a.format == CLI_FMT_TEXT)
        write_text_head(&wn, stdout);
    if (wn.tree) {
        write_tree(&wn.a, &wn.t, wn.keys, wn.nr_keys, wn.bottom_up, wn.sort);
        ana_tree_release(&wn.t);
    } else {
        make_rows(&wn);
        if (wn.a.format == CLI_FMT_JSON)
            write_json(&wn);
        else
            cli_ana_table(&wn.a, wn.tab, stdout, "", true);
        if (wn.a.format == CLI_FMT_TEXT)
            write_legend(&wn, stdout);
    }
    ana_table_destroy(wn.tab);
    free(wn.rows.v);
    free(wn.keys);
    ana_window_release(&wn.w);
    return cli_ana_close(&wn.a);
}
