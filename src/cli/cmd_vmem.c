/* SPDX-License-Identifier: MIT */
/* memscribe vmem: Windows Performance Analyzer's "VirtualAlloc Commit
 * LifeTimes" for Linux: every range that became committed (accessible)
 * and when it was decommitted (unmapped or made inaccessible), with its
 * stack, for a time window; its class (AIFI, AIFO, AOFI, AOFO) and groups
 * per Impacting Type, as the window table's rows; then reserved, committed
 * and commit-charge totals over time.
 * docs/vmem.md. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_time.h"
#include "analysis/plan/ana_plan_fold.h"
#include "analysis/vm/ana_vm.h"
#include "analysis/vm/ana_vm_window.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"

enum {
    OPT_FROM = CLI_ANA_OPT_FIRST_OWN,
    OPT_TO,
    OPT_ORIGIN,
    OPT_INTERVALS,
    OPT_ROWS,
    OPT_BY,
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: memscribe vmem [options] FILE\n\n"
            "Commit lifetimes: each range that became committed (mapped with access;\n"
            "private writable ranges count as commit charge) and when it was\n"
            "decommitted (unmapped, or made PROT_NONE), with the stack that committed\n"
            "it, as Windows Performance Analyzer's VirtualAlloc Commit Lifetimes and\n"
            "`memscribe window`'s heap blocks: each lifetime in the window is AIFI\n"
            "(committed inside, decommitted inside), AIFO (inside, still committed at\n"
            "the end), AOFI (committed before, decommitted inside) or AOFO. Groups\n"
            "(--by) per Impacting Type: Transient = AIFI, Impacting = AIFO and AOFI;\n"
            "Count: lifetimes; Size: bytes committed inside the window; Impacting\n"
            "Size: sum(AIFO) - sum(AOFI). Sorted by |Impacting Size| then Size.\n"
            "Then mapped, reserved (PROT_NONE), committed and commit-charge totals\n"
            "over the window.\n\n"
            "options:\n"
            "  --from T        window start (default start): 1.5s, 250ms, peak, end-1s\n"
            "  --to T          window end, included (default end)\n"
            "  --by KEY        group per stack (default), function (the committing\n"
            "                  function) or origin (call, libc, loader, thread, snapshot)\n"
            "  --origin LIST   only lifetimes committed by these origins: call, libc,\n"
            "                  loader, thread, snapshot (default: all but snapshot)\n"
            "  --intervals N   rows of the totals table (default 10)\n"
            "  --rows N        lifetimes shown per group (default 10; 0: all)\n"
            "  --top N         groups (default 20; 0: all)\n" CLI_ANA_USAGE CLI_ANA_FRAMES_USAGE);
}

enum by {
    BY_STACK = ANA_VM_BY_STACK,
    BY_FUNCTION = ANA_VM_BY_FUNCTION,
    BY_ORIGIN = ANA_VM_BY_ORIGIN
};
static const char *const by_names[] = {"stack", "function", "origin", NULL};

struct vmem {
    struct cli_ana *a;
    struct ana_vm_window w;
    unsigned rows; /* lifetimes per group (0: all) */
    enum by by;
    bool fold;                      /* each process's stacks let go after its exit (vmem_event) */
    struct ana_table *lt, *gt, *tt; /* lifetimes, groups, totals */
};

static const struct ana_column life_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"range", "range", ANA_CELL_STR},
    {"commit", "commit_ns", ANA_CELL_U64 | ANA_CELL_TIME},
    {"decommit", "decommit_ns", ANA_CELL_STR},
    {"size", "size", ANA_CELL_U64},
    {"impacting size", "impacting_size", ANA_CELL_I64},
    {"type", "impacting_type", ANA_CELL_STR},
    {"class", "class", ANA_CELL_STR},
    {"charge", "charge", ANA_CELL_STR},
    {"origin", "origin", ANA_CELL_STR},
    {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
};

/* As window's rows (docs/window.md): pid, type, count, size, impacting
 * size and the key. */
static const struct ana_column group_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"type", "impacting_type", ANA_CELL_STR},
    {"count", "count", ANA_CELL_U64},
    {"size", "size", ANA_CELL_U64},
    {"impacting size", "impacting_size", ANA_CELL_I64},
    {"group", "group", ANA_CELL_LIST | ANA_CELL_INTEREST},
};

static const struct ana_column total_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"time", "time_ns", ANA_CELL_U64 | ANA_CELL_TIME},
    {"mapped", "mapped_bytes", ANA_CELL_U64},
    {"reserved", "reserved_bytes", ANA_CELL_U64},
    {"committed", "committed_bytes", ANA_CELL_U64},
    {"charge", "commit_charge_bytes", ANA_CELL_U64},
};

#define NR_OF(cols) ((unsigned)(sizeof(cols) / sizeof((cols)[0])))

static unsigned parse_origins(const char *arg)
{
    unsigned mask = 0;
    char *copy = strdup(arg), *save = NULL;

    if (!copy)
        cli_die("vmem: out of memory");
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int k;

        for (k = 0; k < FMT_NR_ORIGINS && strcmp(w, fmt_origin_name((unsigned)k)); k++)
            ;
        if (k == FMT_NR_ORIGINS)
            cli_usage_error("vmem: --origin: '%s' is not call, libc, loader, thread or snapshot",
                            w);
        mask |= 1u << k;
    }
    free(copy);
    return mask;
}

/* One lifetime's row. */
static void add_lifetime(struct vmem *s, uint32_t pid, const struct ana_vm_life *l)
{
    struct cli_ana *a = s->a;
    struct ana_table *lt = s->lt;
    const char *const *fr;
    char buf[96];
    unsigned nr;

    fr = cli_ana_stack(a, l->l.commit_stack, false, a->format == CLI_FMT_TEXT ? 1 : 0, &nr);
    ana_table_add_row(lt);
    ana_table_set_u64(lt, 0, pid);
    snprintf(buf, sizeof(buf), "0x%" PRIx64 "-0x%" PRIx64, l->l.lo, l->l.hi);
    ana_table_set_str(lt, 1, buf);
    ana_table_set_u64(lt, 2, l->l.commit_ns);
    if (l->l.open)
        ana_table_set_str(lt, 3, "-");
    else if (a->format == CLI_FMT_TEXT) /* seconds, as the commit column */
        ana_table_set_str(lt, 3, ana_time_format(l->l.decommit_ns, buf, sizeof(buf)));
    else {
        snprintf(buf, sizeof(buf), "%" PRIu64, l->l.decommit_ns);
        ana_table_set_str(lt, 3, buf);
    }
    ana_table_set_u64(lt, 4, l->l.hi - l->l.lo);
    ana_table_set_i64(lt, 5, l->impacting);
    ana_table_set_str(lt, 6, ana_wpa_type_name(l->cls));
    ana_table_set_str(lt, 7, ana_wpa_class_name(l->cls));
    ana_table_set_str(lt, 8, l->l.charge ? "yes" : "no");
    ana_table_set_str(lt, 9, l->l.origin < FMT_NR_ORIGINS ? fmt_origin_name(l->l.origin) : "?");
    ana_table_set_stack(lt, 10, fr, nr, a->interest);
}

/* One group's row, and the rows of its first lifetimes. */
static void add_group(struct vmem *s, const struct ana_vm_group *x)
{
    struct cli_ana *a = s->a;
    uint32_t pid = fmt_reader_image(a->r, x->image)->pid;
    const char *const *fr, *label;
    unsigned nr;

    if (s->by == BY_STACK) {
        fr = cli_ana_stack(a, (uint32_t)x->key, false,
                           a->format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
    } else {
        label = s->by == BY_ORIGIN
                    ? (x->key < FMT_NR_ORIGINS ? fmt_origin_name((unsigned)x->key) : "?")
                    : ana_stacks_str(cli_ana_stacks(a), (uint32_t)x->key);
        fr = &label;
        nr = 1;
        a->interest = 0;
    }
    ana_table_add_row(s->gt);
    ana_table_set_u64(s->gt, 0, pid);
    ana_table_set_str(s->gt, 1, x->transient ? "Transient" : "Impacting");
    ana_table_set_u64(s->gt, 2, x->count);
    ana_table_set_u64(s->gt, 3, x->size);
    ana_table_set_i64(s->gt, 4, x->impacting);
    ana_table_set_stack(s->gt, 5, fr, nr, a->interest);
    for (size_t i = x->first; i < x->first + x->count && (!s->rows || i < x->first + s->rows); i++)
        add_lifetime(s, pid, &s->w.v[i]);
}

static void make_tables(struct vmem *s)
{
    struct cli_ana *a = s->a;
    struct ana_vm_window *w = &s->w;
    struct ana_vm_group *g;
    long ng = ana_vm_window_groups(w, &g);

    if (ng < 0)
        cli_ana_fail(a, (int)ng);
    if (ana_table_create(&s->lt, life_cols, NR_OF(life_cols)) ||
        ana_table_create(&s->gt, group_cols, NR_OF(group_cols)) ||
        ana_table_create(&s->tt, total_cols, NR_OF(total_cols)))
        cli_die("vmem: out of memory");
    size_t n = a->top && a->top < (size_t)ng ? a->top : (size_t)ng;
    if (s->by == BY_STACK) { /* rows that would read alike show more of their stacks */
        uint32_t *stacks = malloc((n + 1) * sizeof(*stacks));
        if (!stacks)
            cli_die("vmem: out of memory");
        for (size_t k = 0; k < n; k++)
            stacks[k] = (uint32_t)g[k].key;
        cli_ana_apart(a, stacks, (unsigned)n, CLI_ANA_TEXT_FRAMES);
        free(stacks);
    }
    for (size_t k = 0; k < n; k++)
        add_group(s, &g[k]);
    for (size_t i = 0; i < w->nr_samples; i++) {
        const struct ana_vm_sample *x = &w->samples[i];

        ana_table_add_row(s->tt);
        ana_table_set_u64(s->tt, 0, fmt_reader_image(a->r, x->image)->pid);
        ana_table_set_u64(s->tt, 1, x->ts);
        ana_table_set_u64(s->tt, 2, x->mapped);
        ana_table_set_u64(s->tt, 3, x->reserved);
        ana_table_set_u64(s->tt, 4, x->committed);
        ana_table_set_u64(s->tt, 5, x->charge);
    }
    free(g);
}

/* Does image have a lifetime in the window? */
static bool image_seen(const struct ana_vm_window *w, uint32_t image)
{
    const struct ana_wpa *c = &w->images[image];

    return c->nr[ANA_AIFI] || c->nr[ANA_AIFO] || c->nr[ANA_AOFI] || c->nr[ANA_AOFO];
}

/* Each process's classes, as window's "processes". */
static void write_json_processes(struct vmem *s, struct ana_json *j)
{
    static const char *const key[ANA_NR_WPA][2] = {{"aifi", "aifi_bytes"},
                                                   {"aifo", "aifo_bytes"},
                                                   {"aofi", "aofi_bytes"},
                                                   {"aofo", "aofo_bytes"}};

    ana_json_key(j, "processes");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < s->w.nr_images; i++) {
        const struct ana_wpa *c = &s->w.images[i];

        if (!image_seen(&s->w, i))
            continue;
        ana_json_begin_object(j);
        cli_ana_image_json(s->a, j, i);
        for (int k = 0; k < ANA_NR_WPA; k++) {
            ana_json_kv_u64(j, key[k][0], c->nr[k]);
            ana_json_kv_u64(j, key[k][1], c->bytes[k]);
        }
        ana_json_kv_i64(j, "impacting_size", ana_wpa_impacting_size(c));
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
}

static void write_json(struct vmem *s)
{
    struct ana_vm_window *w = &s->w;
    struct ana_json j;

    ana_json_init(&j, stdout, true);
    ana_json_begin_object(&j);
    ana_json_kv_u64(&j, "from_ns", w->replay.t0);
    ana_json_kv_u64(&j, "to_ns", w->replay.t1);
    ana_json_kv_u64(&j, "peak_committed_bytes", w->peak_committed);
    ana_json_kv_u64(&j, "peak_committed_ns", w->peak_ns);
    write_json_processes(s, &j);
    ana_json_key(&j, "groups");
    ana_table_write_json(s->gt, &j);
    ana_json_key(&j, "lifetimes");
    ana_table_write_json(s->lt, &j);
    ana_json_key(&j, "totals");
    ana_table_write_json(s->tt, &j);
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("vmem: cannot write the output");
}

static void write_text(struct vmem *s)
{
    struct cli_ana *a = s->a;
    struct ana_vm_window *w = &s->w;
    char buf[96], name[256];

    printf("memscribe vmem: %s: commit lifetimes from %s", a->path,
           ana_time_format(w->replay.t0, buf, sizeof(buf)));
    printf(" to %s\n", ana_time_format(w->replay.t1, buf, sizeof(buf)));
    printf("peak committed: %" PRIu64 " bytes (%s) at %s\n", w->peak_committed,
           ana_bytes_format(w->peak_committed, buf, sizeof(buf)),
           ana_time_format(w->peak_ns, buf + 48, 48));
    for (uint32_t i = 0; i < w->nr_images; i++) {
        const struct ana_wpa *c = &w->images[i];

        if (!image_seen(w, i))
            continue;
        cli_ana_image_name(a, i, name, sizeof(name));
        printf("%s: Transient %" PRIu64 " lifetimes %" PRIu64 " bytes; Impacting %" PRIu64
               " lifetimes, Impacting Size %" PRId64 " bytes\n",
               name, ana_wpa_transient_count(c), c->bytes[ANA_AIFI], ana_wpa_impacting_count(c),
               ana_wpa_impacting_size(c));
        printf("  AIFI %" PRIu64 " (%" PRIu64 " B)  AIFO %" PRIu64 " (%" PRIu64 " B)  AOFI %" PRIu64
               " (%" PRIu64 " B)  AOFO %" PRIu64 " (%" PRIu64 " B)\n",
               c->nr[ANA_AIFI], c->bytes[ANA_AIFI], c->nr[ANA_AIFO], c->bytes[ANA_AIFO],
               c->nr[ANA_AOFI], c->bytes[ANA_AOFI], c->nr[ANA_AOFO], c->bytes[ANA_AOFO]);
    }
    putchar('\n');
    if (ana_table_nr_rows(s->gt)) {
        printf("by %s:\n", by_names[s->by]);
        cli_ana_table(a, s->gt, stdout, "  ", true);
        if (s->rows)
            printf("\nlifetimes (at most %u per group):\n", s->rows);
        else
            printf("\nlifetimes:\n");
        cli_ana_table(a, s->lt, stdout, "  ", true);
    } else {
        printf("no commit lifetimes in the window\n");
    }
    printf("\ntotals over time:\n");
    cli_ana_table(a, s->tt, stdout, "  ", true);
}

static void write_tables(struct vmem *s)
{
    make_tables(s);
    if (s->a->format == CLI_FMT_JSON)
        write_json(s);
    else if (s->a->format == CLI_FMT_CSV)
        cli_ana_table(s->a, s->lt, stdout, "", true);
    else
        write_text(s);
    ana_table_destroy(s->lt);
    ana_table_destroy(s->gt);
    ana_table_destroy(s->tt);
}

/* At a process's exit: the frames of its ranges still committed, the
 * window's open lifetimes at the end (ana_vm_finish), when its stacks are
 * gone. */
static int keep_committed(struct vmem *s, const struct ana_vm_image *im)
{
    const struct ana_vm_replay *p = &s->w.replay;
    int rc;

    for (uint32_t i = 0; i < im->nr; i++) {
        const struct ana_vm_piece *x = &im->v[i];

        if (x->prot == PROT_NONE || x->collector || !(s->w.origins & (1u << x->origin)) ||
            ana_wpa_class_of(x->commit_ns, 0, true, p->t0, p->t1) == ANA_WPA_OUTSIDE)
            continue;
        if ((rc = cli_fold_keep_frames(s->a, x->commit_stack)))
            return rc;
    }
    return 0;
}

/* The replay's event (ana_scan_fn), on a process tree: the frames the
 * tables read are kept while the process's stacks are there (a lifetime
 * in the window as it ends, the ranges still committed at the exit, the
 * stack of a mapping call that comes after it), and its stacks go a
 * second after its exit (ana_letgo_image). */
static int vmem_event(void *arg, const struct fmt_event *ev)
{
    struct vmem *s = arg;
    size_t nr = s->w.nr;
    int rc = ana_vm_replay_event(&s->w.replay, ev);
    const struct ana_vm_image *im = ana_vm_get(&s->w.replay.vm, ev->image);

    if (rc || !s->fold)
        return rc;
    for (; nr < s->w.nr; nr++)
        if ((rc = cli_fold_keep_frames(s->a, s->w.v[nr].l.commit_stack)))
            return rc;
    if (ev->kind == FMT_EV_PROCESS_EXIT) {
        if (im && im->ended && (rc = keep_committed(s, im)))
            return rc;
        return ana_letgo_image(&s->a->letgo, ev->image, ev->ts_ns);
    }
    if (im && im->ended && ana_vm_kind_applies(ev->kind))
        return cli_fold_keep_frames(s->a, ev->stack);
    return 0;
}

int cmd_vmem(int argc, char **argv)
{
    static const struct option own[] = {
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"origin", required_argument, NULL, OPT_ORIGIN},
        {"intervals", required_argument, NULL, OPT_INTERVALS},
        {"rows", required_argument, NULL, OPT_ROWS},
        {"by", required_argument, NULL, OPT_BY},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_ANALYSIS | CLI_TAKES_FRAMES, .own = own, .usage = usage};
    struct ana_time_point from = {.base = ANA_TIME_START}, to = {.base = ANA_TIME_END};
    struct fmt_trace_counts counts;
    struct cli_ana a;
    struct vmem s;
    int c, rc;

    memset(&s, 0, sizeof(s));
    s.rows = 10;
    s.by = BY_STACK;
    s.w.origins = ANA_VM_WINDOW_ORIGINS;
    s.w.replay.nr_intervals = 10;
    cli_ana_init(&a, "vmem", 20);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_FROM:
        case OPT_TO:
            if (ana_time_parse_point(optarg, c == OPT_FROM ? &from : &to))
                cli_usage_error("vmem: --%s wants a time like 1.5s, 250ms, peak or end-1s, not "
                                "'%s'",
                                c == OPT_FROM ? "from" : "to", optarg);
            break;
        case OPT_ORIGIN:
            s.w.origins = parse_origins(optarg);
            break;
        case OPT_INTERVALS:
            s.w.replay.nr_intervals = (unsigned)cli_ana_number(&a, "intervals", optarg);
            if (!s.w.replay.nr_intervals)
                cli_usage_error("vmem: --intervals wants at least 1");
            break;
        case OPT_ROWS:
            s.rows = (unsigned)cli_ana_number(&a, "rows", optarg);
            break;
        case OPT_BY:
            s.by = (enum by)cli_ana_choice(&a, "by", optarg, by_names);
            break;
        }
    }
    /* A tree's processes' stacks are decoded as needed and go as they end
     * (docs/architecture.md, "Process trees"). */
    s.fold = a.stacks_later = ana_plan_fold_wanted();
    cli_ana_open(&a, argc, argv, optind);
    fmt_reader_counts(a.r, &counts);
    s.a = &a;
    s.w.replay.filter = &a.filter;
    s.w.replay.r = a.r;
    s.w.replay.t0 = cli_ana_time(&a, "--from", &from);
    s.w.replay.t1 = cli_ana_time(&a, "--to", &to);
    if (s.w.replay.t0 > s.w.replay.t1)
        cli_usage_error("vmem: --from is after --to");
    ana_vm_window_init(&s.w);
    cli_ana_scan(&a, UINT64_MAX, vmem_event, &s);
    if ((rc = ana_vm_replay_finish(&s.w.replay)))
        cli_ana_fail(&a, rc);
    /* The definitions no stack was read from yet: a corrupt one fails here,
     * as it does at open without a fold. */
    if (s.fold && (rc = fmt_reader_load_stacks(a.r)))
        cli_ana_fail(&a, rc);
    if ((rc = ana_vm_window_key(&s.w, (enum ana_vm_by)s.by,
                                s.by == BY_FUNCTION && s.w.nr ? cli_ana_stacks(&a) : NULL)))
        cli_ana_fail(&a, rc);
    write_tables(&s);
    ana_vm_window_release(&s.w);
    return cli_ana_close(&a);
}
