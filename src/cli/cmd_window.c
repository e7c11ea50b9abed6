/* SPDX-License-Identifier: MIT */
/* memscribe window: Windows Performance Analyzer's heap table for a time
 * window [--from, --to]: rows grouped by stack, thread, function or size
 * class, with Impacting Type (Transient, Impacting), Count, Size and
 * Impacting Size; top-down or bottom-up; as rows or as a call tree.
 * docs/window.md. */
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
#include "cli/cli.h"
#include "cli/cli_ana.h"
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
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: memscribe window [options] FILE\n\n"
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
            "  --top N         rows, or children per tree node (default 20; 0: all)\n" CLI_ANA_USAGE
                CLI_ANA_FRAMES_USAGE);
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
};

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
                 const struct ana_wpa *c)
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
    }
}

/* Rows of stack keys merged by their allocating function (by_function),
 * or by the frames the row shows (cli_rows.h; the row keeps its lowest
 * stack id, whose frames it prints). */
static void merge_rows(struct cli_ana *a, struct ana_window_key *k, long n, bool by_function,
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
    }
    for (size_t i = 0; i < m.cap; i++)
        if (ana_map_slot_key(&m, i)) {
            const struct ana_window_key *f = ana_map_slot_val(&m, i);
            push(rs, f->image, f->key, 0, &f->c);
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

static void write_tree(struct cli_ana *a, struct ana_window_key *k, long n, bool bottom_up,
                       uint32_t depth, enum sort sort)
{
    struct ana_tree t;
    uint32_t *labels = NULL;
    size_t cap = 0;

    if (ana_tree_init(&t, 5, depth))
        cli_die("window: out of memory");
    for (long i = 0; i < n; i++) {
        const struct ana_wpa *c = &k[i].c;
        /* A stack with blocks only from before the window and past it
         * (AOFO) has nothing in it: no row (push()), and no node. */
        if (!ana_wpa_transient_count(c) && !ana_wpa_impacting_count(c))
            continue;
        uint32_t nl = cli_ana_tree_path(a, (uint32_t)k[i].key, bottom_up, &labels, &cap, 0);
        int64_t m[5] = {ana_wpa_impacting_size(c),
                        (int64_t)(c->bytes[ANA_AIFI] + c->bytes[ANA_AIFO]),
                        (int64_t)(c->nr[ANA_AIFI] + c->nr[ANA_AIFO] + c->nr[ANA_AOFI]),
                        (int64_t)ana_wpa_transient_count(c), (int64_t)ana_wpa_impacting_count(c)};
        if (ana_tree_add(&t, labels, nl, m))
            cli_die("window: out of memory");
    }
    if (ana_tree_sort(&t, sort == SORT_SIZE ? 1 : sort == SORT_COUNT ? 2 : 0))
        cli_die("window: out of memory");
    cli_ana_tree(a, &t, tree_mets, 5, false, stdout);
    ana_tree_release(&t);
    free(labels);
}

static const char *const class_name[ANA_NR_WPA] = {"aifi", "aifo", "aofi", "aofo"};

int cmd_window(int argc, char **argv)
{
    static const struct option own[] = {
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"by", required_argument, NULL, OPT_BY},
        {"sort", required_argument, NULL, OPT_SORT},
        {"bottom-up", no_argument, NULL, OPT_BOTTOM_UP},
        {"tree", no_argument, NULL, OPT_TREE},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_ANALYSIS | CLI_TAKES_FRAMES, .own = own, .usage = usage};
    struct cli_ana a;
    struct ana_time_point from = {.base = ANA_TIME_START}, to = {.base = ANA_TIME_END};
    enum by by = BY_STACK;
    enum sort sort = SORT_IMPACTING;
    bool bottom_up = false, tree = false;
    uint32_t depth = 0;
    int c, rc;

    cli_ana_init(&a, "window", 20);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_FROM:
        case OPT_TO:
            if (ana_time_parse_point(optarg, c == OPT_FROM ? &from : &to))
                cli_usage_error("window: --%s wants a time like 1.5s, 250ms, peak or end, not "
                                "'%s'",
                                c == OPT_FROM ? "from" : "to", optarg);
            break;
        case OPT_BY:
            by = (enum by)cli_ana_choice(&a, "by", optarg, by_names);
            break;
        case OPT_SORT:
            sort = (enum sort)cli_ana_choice(&a, "sort", optarg, sort_names);
            break;
        case OPT_BOTTOM_UP:
            bottom_up = true;
            break;
        case OPT_TREE:
            tree = true;
            break;
        case OPT_DEPTH:
            depth = (uint32_t)cli_ana_number(&a, "--depth", optarg);
            break;
        }
    }
    if (tree && (by == BY_THREAD || by == BY_SIZE_CLASS || by == BY_HEAP))
        cli_usage_error("window: --tree shows stacks; it does not go with --by %s", by_names[by]);
    /* Caught before clamping to the trace, which could hide it. */
    if (from.base == to.base && from.offset_ns > to.offset_ns)
        cli_usage_error("window: --to is before --from");
    cli_ana_open(&a, argc, argv, optind);
    if (by == BY_HEAP && !fmt_reader_pe(a.r) && !fmt_reader_pools(a.r))
        cli_die("window: %s: --by heap needs a trace of a Windows program (heap handles) or one "
                "recorded with pools (format 1.4, memscribe record)",
                a.path);

    uint64_t t0 = cli_ana_time(&a, "--from", &from);
    uint64_t t1 = cli_ana_time(&a, "--to", &to);
    if (t1 < t0)
        cli_usage_error(
            "window: the window ends (%" PRIu64 " ns) before it starts (%" PRIu64 " ns)", t1, t0);

    struct ana_window w;
    enum ana_window_by wby = by == BY_THREAD       ? ANA_WINDOW_BY_THREAD
                             : by == BY_SIZE_CLASS ? ANA_WINDOW_BY_SIZE_CLASS
                             : by == BY_HEAP       ? ANA_WINDOW_BY_HEAP
                                                   : ANA_WINDOW_BY_STACK;
    if ((rc = ana_window_compute(&w, a.r, &a.filter, t0, t1, wby, cli_ana_progress, &a)))
        cli_ana_fail(&a, rc);
    cli_ana_progress_done(&a);
    struct ana_window_key *keys;
    long nk = ana_window_keys(&w, &keys);
    if (nk < 0)
        cli_ana_fail(&a, (int)nk);

    char b0[64], b1[64], name[256];
    if (a.format == CLI_FMT_TEXT) {
        printf("memscribe window: %s: from %s to %s\n", a.path, ana_time_format(t0, b0, sizeof(b0)),
               ana_time_format(t1, b1, sizeof(b1)));
        for (uint32_t i = 0; i < w.nr_images; i++) {
            if (!w.image_seen[i])
                continue;
            const struct ana_wpa *s = &w.images[i];
            const char *e = ana_sample_mark(fmt_reader_sample_bytes(a.r)); /* estimates */

            cli_ana_image_name(&a, i, name, sizeof(name));
            printf("%s: Transient %s%" PRIu64 " blocks %s%" PRIu64 " bytes; Impacting %s%" PRIu64
                   " blocks, Impacting Size %s%" PRId64 " bytes\n",
                   name, e, ana_wpa_transient_count(s), e, s->bytes[ANA_AIFI], e,
                   ana_wpa_impacting_count(s), e, ana_wpa_impacting_size(s));
            printf("  AIFI %s%" PRIu64 " (%s%" PRIu64 " B)  AIFO %s%" PRIu64 " (%s%" PRIu64
                   " B)  AOFI %s%" PRIu64 " (%s%" PRIu64 " B)  AOFO %s%" PRIu64 " (%s%" PRIu64
                   " B)\n",
                   e, s->nr[ANA_AIFI], e, s->bytes[ANA_AIFI], e, s->nr[ANA_AIFO], e,
                   s->bytes[ANA_AIFO], e, s->nr[ANA_AOFI], e, s->bytes[ANA_AOFI], e,
                   s->nr[ANA_AOFO], e, s->bytes[ANA_AOFO]);
        }
        putchar('\n');
    }

    if (tree) {
        write_tree(&a, keys, nk, bottom_up, depth, sort);
    } else {
        struct rows rs = {0};
        if (by == BY_FUNCTION || by == BY_STACK)
            merge_rows(&a, keys, nk, by == BY_FUNCTION, &rs);
        else
            for (long i = 0; i < nk; i++)
                push(&rs, keys[i].image, keys[i].key, keys[i].tid, &keys[i].c);
        if (rs.nr)
            qsort_r(rs.v, rs.nr, sizeof(*rs.v), by_sort, &sort);

        static const char *const key_title[] = {"stack", "function", "thread", "size class",
                                                "handle"};
        static const char *const key_json[] = {"stack", "function", "tid", "size_class", "heap"};
        struct ana_column cols[] = {
            {"pid", "pid", ANA_CELL_U64},
            {"type", "impacting_type", ANA_CELL_STR},
            {"count", "count", ANA_CELL_U64 | ANA_CELL_EST},
            {"size", "size", ANA_CELL_U64 | ANA_CELL_EST},
            {"impacting size", "impacting_size", ANA_CELL_I64 | ANA_CELL_EST},
            {by == BY_HEAP && !fmt_reader_pe(a.r) ? "heap" : key_title[by], key_json[by],
             by == BY_STACK    ? ANA_CELL_LIST
             : by == BY_THREAD ? ANA_CELL_U64
                               : ANA_CELL_STR},
        };
        struct ana_table *t;
        if (ana_table_create(&t, cols, 6))
            cli_die("window: out of memory");
        for (size_t i = 0; i < rs.nr && (!a.top || i < a.top); i++) {
            const struct row *r = &rs.v[i];
            ana_table_add_row(t);
            const struct fmt_image_info *ii = fmt_reader_image(a.r, r->image);
            ana_table_set_u64(t, 0, ii ? ii->pid : 0);
            ana_table_set_str(t, 1, r->transient ? "Transient" : "Impacting");
            ana_table_set_u64(t, 2, r->count);
            ana_table_set_u64(t, 3, r->size);
            ana_table_set_i64(t, 4, r->impacting);
            unsigned nr;
            uint64_t lo, hi;
            switch (by) {
            case BY_STACK: {
                const char *const *fr =
                    cli_ana_stack(&a, (uint32_t)r->key, false,
                                  a.format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
                ana_table_set_list(t, 5, fr, nr);
                break;
            }
            case BY_FUNCTION:
                ana_table_set_str(t, 5, ana_stacks_str(cli_ana_stacks(&a), (uint32_t)r->key));
                break;
            case BY_THREAD:
                ana_table_set_u64(t, 5, r->tid);
                break;
            case BY_SIZE_CLASS:
                ana_size_class_bounds((unsigned)r->key, &lo, &hi);
                snprintf(b0, sizeof(b0), "%" PRIu64 "-%" PRIu64, lo, hi);
                ana_table_set_str(t, 5, b0);
                break;
            case BY_HEAP:
                if (fmt_reader_pe(a.r)) {
                    snprintf(b0, sizeof(b0), "0x%" PRIx64, r->key);
                } else { /* a Linux trace's heap id: malloc's, or a pool's name */
                    const struct ana_heap *hp = &w.heaps.v[r->key];
                    ana_heap_name(a.r, hp->image, hp->handle, b0, sizeof(b0));
                }
                ana_table_set_str(t, 5, b0);
                break;
            }
        }
        if (a.format == CLI_FMT_JSON) {
            struct ana_json j;
            cli_ana_json_begin(&a, &j);
            ana_json_kv_u64(&j, "from_ns", t0);
            ana_json_kv_u64(&j, "to_ns", t1);
            ana_json_kv_u64(&j, "events_read", w.nr_events_read);
            ana_json_key(&j, "processes");
            ana_json_begin_array(&j);
            for (uint32_t i = 0; i < w.nr_images; i++) {
                if (!w.image_seen[i])
                    continue;
                const struct ana_wpa *s = &w.images[i];
                ana_json_begin_object(&j);
                cli_ana_image_json(&a, &j, i);
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
            ana_table_write_json(t, &j);
            ana_json_end_object(&j);
            if (ana_json_finish(&j))
                cli_die("window: writing the output failed");
        } else {
            cli_ana_table(&a, t, stdout, "", true);
        }
        ana_table_destroy(t);
        free(rs.v);
    }
    free(keys);
    ana_window_release(&w);
    return cli_ana_close(&a);
}
