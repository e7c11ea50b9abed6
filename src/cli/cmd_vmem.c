/* SPDX-License-Identifier: MIT */
/* memscribe vmem: Windows Performance Analyzer's "VirtualAlloc Commit
 * LifeTimes" for Linux: every range that became committed (accessible)
 * and when it was decommitted (unmapped or made inaccessible), with its
 * stack, for a time window; grouped by stack and sorted like the window
 * table; then reserved, committed and commit-charge totals over time.
 * docs/vmem.md. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_time.h"
#include "analysis/vm/ana_vm.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"

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
            "it. Rows overlapping the window, grouped (--by); groups sorted by\n"
            "|Impacting Size| then Size, as in `memscribe window`. Impacting Size:\n"
            "+size for a lifetime committed inside and open at the end (AIFO), -size\n"
            "for one committed before and decommitted inside (AOFI), 0 otherwise.\n"
            "Then mapped, reserved (PROT_NONE), committed and commit-charge totals\n"
            "over the window.\n\n"
            "options:\n"
            "  --from T        window start (default start): 1.5s, 250ms, end-1s\n"
            "  --to T          window end, included (default end)\n"
            "  --by KEY        group per stack (default), function (the committing\n"
            "                  function) or origin (call, libc, loader, thread, snapshot)\n"
            "  --origin LIST   only lifetimes committed by these origins: call, libc,\n"
            "                  loader, thread, snapshot (default: all but snapshot)\n"
            "  --intervals N   rows of the totals table (default 10)\n"
            "  --rows N        lifetimes shown per stack group (default 10; 0: all)\n"
            "  --top N         stack groups (default 20; 0: all)\n" CLI_ANA_USAGE);
}

static const char *const origin_names[] = {"call", "libc", "loader", "thread", "snapshot"};
#define NR_ORIGINS 5

enum by { BY_STACK, BY_FUNCTION, BY_ORIGIN };

struct life {
    struct ana_vm_lifetime l;
    int64_t impacting;
    uint64_t key; /* the group: stack id, function string id or origin */
};

struct group {
    uint32_t image;
    uint64_t key;
    uint64_t count, size;
    int64_t impacting;
    size_t first; /* index in the sorted lifetimes */
};

struct sample {
    uint64_t ts;
    uint32_t image;
    uint64_t mapped, reserved, committed, charge;
};

struct vmem {
    struct cli_ana *a;
    struct ana_vm vm;
    uint64_t t0, t1;
    unsigned origins; /* bit per enum fmt_origin */
    struct life *v;
    size_t nr, cap;
    unsigned nr_intervals, next_interval;
    struct sample *samples;
    size_t nr_samples, cap_samples;
    uint64_t peak_committed, peak_ns;
    uint32_t peak_image;
};

static int keep_lifetime(void *arg, const struct ana_vm_lifetime *l)
{
    struct vmem *s = arg;
    uint64_t end = l->open ? UINT64_MAX : l->decommit_ns;
    struct life *x;

    if (!(s->origins & (1u << l->origin)) || l->commit_ns > s->t1 || end < s->t0)
        return 0;
    if (s->nr == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = realloc(s->v, s->cap * sizeof(*s->v));
        if (!s->v)
            cli_die("vmem: out of memory");
    }
    x = &s->v[s->nr++];
    x->l = *l;
    x->impacting = 0;
    if (l->commit_ns >= s->t0 && end > s->t1)
        x->impacting = (int64_t)(l->hi - l->lo); /* AIFO */
    else if (l->commit_ns < s->t0 && end <= s->t1)
        x->impacting = -(int64_t)(l->hi - l->lo); /* AOFI */
    return 0;
}

static void take_samples(struct vmem *s, uint64_t upto)
{
    while (s->next_interval <= s->nr_intervals) {
        uint64_t b = s->t0 + (s->t1 - s->t0) / s->nr_intervals * s->next_interval;

        if (s->next_interval == s->nr_intervals)
            b = s->t1;
        if (b >= upto)
            return;
        for (uint32_t i = 0; i < s->vm.nr_images; i++) {
            const struct ana_vm_image *im = &s->vm.images[i];
            struct sample *x;

            if (!im->max_addr || !ana_filter_pid(&s->a->filter, fmt_reader_image(s->a->r, i)->pid))
                continue;
            if (s->nr_samples == s->cap_samples) {
                s->cap_samples = s->cap_samples ? s->cap_samples * 2 : 64;
                s->samples = realloc(s->samples, s->cap_samples * sizeof(*s->samples));
                if (!s->samples)
                    cli_die("vmem: out of memory");
            }
            x = &s->samples[s->nr_samples++];
            *x = (struct sample){b, i, im->mapped, im->reserved, im->committed, im->charge};
        }
        s->next_interval++;
    }
}

static int on_event(void *arg, const struct fmt_event *ev)
{
    struct vmem *s = arg;
    const struct ana_vm_image *im;
    int rc;

    if (!ana_filter_pid(&s->a->filter, ev->pid))
        return 0;
    take_samples(s, ev->ts_ns);
    if ((rc = ana_vm_event(&s->vm, ev)))
        return rc;
    im = ana_vm_get(&s->vm, ev->image);
    if (im && im->committed > s->peak_committed && ev->ts_ns >= s->t0 && ev->ts_ns <= s->t1) {
        s->peak_committed = im->committed;
        s->peak_ns = ev->ts_ns;
        s->peak_image = ev->image;
    }
    return 0;
}

static int by_group(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    uint64_t ia = a->impacting < 0 ? (uint64_t)0 - (uint64_t)a->impacting : (uint64_t)a->impacting;
    uint64_t ib = b->impacting < 0 ? (uint64_t)0 - (uint64_t)b->impacting : (uint64_t)b->impacting;

    if (ia != ib)
        return ia < ib ? 1 : -1;
    if (a->size != b->size)
        return a->size < b->size ? 1 : -1;
    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int by_group_then_time(const void *x, const void *y)
{
    const struct life *a = x, *b = y;

    if (a->l.image != b->l.image)
        return a->l.image < b->l.image ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->l.commit_ns != b->l.commit_ns)
        return a->l.commit_ns < b->l.commit_ns ? -1 : 1;
    return a->l.lo < b->l.lo ? -1 : a->l.lo > b->l.lo;
}

static const struct ana_column life_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"range", "range", ANA_CELL_STR},
    {"commit", "commit_ns", ANA_CELL_U64},
    {"decommit", "decommit_ns", ANA_CELL_STR},
    {"size", "size", ANA_CELL_U64},
    {"impacting size", "impacting_size", ANA_CELL_I64},
    {"charge", "charge", ANA_CELL_STR},
    {"origin", "origin", ANA_CELL_STR},
    {"stack", "stack", ANA_CELL_LIST},
};

static const struct ana_column group_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"count", "count", ANA_CELL_U64},
    {"size", "size", ANA_CELL_U64},
    {"impacting size", "impacting_size", ANA_CELL_I64},
    {"group", "group", ANA_CELL_LIST},
};

static const struct ana_column total_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"time", "time_ns", ANA_CELL_U64},
    {"mapped", "mapped", ANA_CELL_U64},
    {"reserved", "reserved", ANA_CELL_U64},
    {"committed", "committed", ANA_CELL_U64},
    {"charge", "commit_charge", ANA_CELL_U64},
};

static unsigned parse_origins(const char *arg)
{
    unsigned mask = 0;
    char *copy = strdup(arg), *save = NULL;

    if (!copy)
        cli_die("vmem: out of memory");
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int k;

        for (k = 0; k < NR_ORIGINS && strcmp(w, origin_names[k]); k++)
            ;
        if (k == NR_ORIGINS)
            cli_usage_error("vmem: --origin: '%s' is not call, libc, loader, thread or snapshot", w);
        mask |= 1u << k;
    }
    free(copy);
    return mask;
}

/* Groups of the sorted lifetimes: consecutive rows of one stack. */
static size_t make_groups(struct vmem *s, struct group **out)
{
    struct group *g = malloc((s->nr + 1) * sizeof(*g));
    size_t n = 0;

    if (!g)
        cli_die("vmem: out of memory");
    for (size_t i = 0; i < s->nr; i++) {
        const struct life *x = &s->v[i];

        if (!n || g[n - 1].image != x->l.image || g[n - 1].key != x->key)
            g[n++] = (struct group){x->l.image, x->key, 0, 0, 0, i};
        g[n - 1].count++;
        g[n - 1].size += x->l.hi - x->l.lo;
        g[n - 1].impacting += x->impacting;
    }
    qsort(g, n, sizeof(*g), by_group);
    *out = g;
    return n;
}

static void write_tables(struct vmem *s, unsigned rows, enum by by)
{
    struct cli_ana *a = s->a;
    struct ana_table *lt, *gt, *tt;
    struct group *g;
    size_t ng = make_groups(s, &g);
    char buf[96];
    unsigned nr;

    if (ana_table_create(&lt, life_cols, 9) || ana_table_create(&gt, group_cols, 5) ||
        ana_table_create(&tt, total_cols, 6))
        cli_die("vmem: out of memory");
    for (size_t k = 0; k < ng && (!a->top || k < a->top); k++) {
        const struct group *x = &g[k];
        uint32_t pid = fmt_reader_image(a->r, x->image)->pid;
        const char *const *fr, *label;

        if (by == BY_STACK) {
            fr = cli_ana_stack(a, (uint32_t)x->key, false, 0, &nr);
        } else {
            label = by == BY_ORIGIN ? (x->key < NR_ORIGINS ? origin_names[x->key] : "?")
                                    : ana_stacks_str(cli_ana_stacks(a), (uint32_t)x->key);
            fr = &label;
            nr = 1;
        }

        ana_table_add_row(gt);
        ana_table_set_u64(gt, 0, pid);
        ana_table_set_u64(gt, 1, x->count);
        ana_table_set_u64(gt, 2, x->size);
        ana_table_set_i64(gt, 3, x->impacting);
        ana_table_set_list(gt, 4, fr, nr);
        for (size_t i = x->first; i < x->first + x->count && (!rows || i < x->first + rows); i++) {
            const struct life *l = &s->v[i];

            fr = cli_ana_stack(a, l->l.commit_stack, false, a->format == CLI_FMT_TEXT ? 1 : 0, &nr);
            ana_table_add_row(lt);
            ana_table_set_u64(lt, 0, pid);
            snprintf(buf, sizeof(buf), "0x%" PRIx64 "-0x%" PRIx64, l->l.lo, l->l.hi);
            ana_table_set_str(lt, 1, buf);
            ana_table_set_u64(lt, 2, l->l.commit_ns);
            if (l->l.open)
                ana_table_set_str(lt, 3, "-");
            else {
                snprintf(buf, sizeof(buf), "%" PRIu64, l->l.decommit_ns);
                ana_table_set_str(lt, 3, buf);
            }
            ana_table_set_u64(lt, 4, l->l.hi - l->l.lo);
            ana_table_set_i64(lt, 5, l->impacting);
            ana_table_set_str(lt, 6, l->l.charge ? "yes" : "no");
            ana_table_set_str(lt, 7, l->l.origin < NR_ORIGINS ? origin_names[l->l.origin] : "?");
            ana_table_set_list(lt, 8, fr, nr);
        }
    }
    for (size_t i = 0; i < s->nr_samples; i++) {
        const struct sample *x = &s->samples[i];

        ana_table_add_row(tt);
        ana_table_set_u64(tt, 0, fmt_reader_image(a->r, x->image)->pid);
        ana_table_set_u64(tt, 1, x->ts);
        ana_table_set_u64(tt, 2, x->mapped);
        ana_table_set_u64(tt, 3, x->reserved);
        ana_table_set_u64(tt, 4, x->committed);
        ana_table_set_u64(tt, 5, x->charge);
    }
    if (a->format == CLI_FMT_JSON) {
        struct ana_json j;

        ana_json_init(&j, stdout, true);
        ana_json_begin_object(&j);
        ana_json_key(&j, "from_ns");
        ana_json_u64(&j, s->t0);
        ana_json_key(&j, "to_ns");
        ana_json_u64(&j, s->t1);
        ana_json_key(&j, "peak_committed");
        ana_json_u64(&j, s->peak_committed);
        ana_json_key(&j, "peak_committed_ns");
        ana_json_u64(&j, s->peak_ns);
        ana_json_key(&j, "groups");
        ana_table_write_json(gt, &j);
        ana_json_key(&j, "lifetimes");
        ana_table_write_json(lt, &j);
        ana_json_key(&j, "totals");
        ana_table_write_json(tt, &j);
        ana_json_end_object(&j);
        if (ana_json_finish(&j))
            cli_die("vmem: cannot write the output");
    } else if (a->format == CLI_FMT_CSV) {
        cli_ana_table(a, lt, stdout, "", true);
    } else {
        printf("memscribe vmem: %s: commit lifetimes from %s", a->path,
               ana_time_format(s->t0, buf, sizeof(buf)));
        printf(" to %s (times in ns below)\n", ana_time_format(s->t1, buf, sizeof(buf)));
        printf("peak committed: %" PRIu64 " bytes (%s) at %s\n\n", s->peak_committed,
               ana_bytes_format(s->peak_committed, buf, sizeof(buf)),
               ana_time_format(s->peak_ns, buf + 48, 48));
        if (ana_table_nr_rows(gt)) {
            printf("by %s:\n", by == BY_STACK ? "stack" : by == BY_FUNCTION ? "function" : "origin");
            cli_ana_table(a, gt, stdout, "  ", true);
            if (rows)
                printf("\nlifetimes (at most %u per group):\n", rows);
            else
                printf("\nlifetimes:\n");
            cli_ana_table(a, lt, stdout, "  ", true);
        } else {
            printf("no commit lifetimes in the window\n");
        }
        printf("\ntotals over time:\n");
        cli_ana_table(a, tt, stdout, "  ", true);
    }
    ana_table_destroy(lt);
    ana_table_destroy(gt);
    ana_table_destroy(tt);
    free(g);
}

int cmd_vmem(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_ANA_LONGOPTS,
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"origin", required_argument, NULL, OPT_ORIGIN},
        {"intervals", required_argument, NULL, OPT_INTERVALS},
        {"rows", required_argument, NULL, OPT_ROWS},
        {"by", required_argument, NULL, OPT_BY},
        {NULL, 0, NULL, 0},
    };
    struct ana_time_point from = {.base = ANA_TIME_START}, to = {.base = ANA_TIME_END};
    struct fmt_trace_counts counts;
    struct cli_ana a;
    struct vmem s;
    unsigned rows = 10;
    enum by by = BY_STACK;
    int c, rc;

    memset(&s, 0, sizeof(s));
    s.origins = (1u << NR_ORIGINS) - 1 - (1u << FMT_ORIGIN_SNAPSHOT);
    s.nr_intervals = 10;
    cli_ana_init(&a, "vmem", 20);
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return CLI_EXIT_OK;
        case OPT_FROM:
        case OPT_TO:
            if (ana_time_parse_point(optarg, c == OPT_FROM ? &from : &to) ||
                (c == OPT_FROM ? from : to).base == ANA_TIME_PEAK)
                cli_usage_error("vmem: --%s wants a time like 1.5s, 250ms or end-1s, not '%s'",
                                c == OPT_FROM ? "from" : "to", optarg);
            break;
        case OPT_ORIGIN:
            s.origins = parse_origins(optarg);
            break;
        case OPT_INTERVALS:
            s.nr_intervals = (unsigned)cli_ana_number(&a, "intervals", optarg);
            if (!s.nr_intervals)
                cli_usage_error("vmem: --intervals wants at least 1");
            break;
        case OPT_ROWS:
            rows = (unsigned)cli_ana_number(&a, "rows", optarg);
            break;
        case OPT_BY:
            if (!strcmp(optarg, "stack"))
                by = BY_STACK;
            else if (!strcmp(optarg, "function"))
                by = BY_FUNCTION;
            else if (!strcmp(optarg, "origin"))
                by = BY_ORIGIN;
            else
                cli_usage_error("vmem: --by wants stack, function or origin, not '%s'", optarg);
            break;
        default:
            if (!cli_ana_option(&a, c, optarg)) {
                usage(stderr);
                cli_usage_error("vmem: unknown option '%s'", argv[optind - 1]);
            }
        }
    }
    cli_ana_open(&a, argc, argv, optind);
    fmt_reader_counts(a.r, &counts);
    s.a = &a;
    s.t0 = ana_time_resolve(&from, counts.last_ts_ns, counts.last_ts_ns);
    s.t1 = ana_time_resolve(&to, counts.last_ts_ns, counts.last_ts_ns);
    if (s.t0 > s.t1)
        cli_usage_error("vmem: --from is after --to");
    s.next_interval = 1;
    ana_vm_init(&s.vm, keep_lifetime, &s);
    cli_ana_scan(&a, UINT64_MAX, on_event, &s);
    take_samples(&s, UINT64_MAX);
    if ((rc = ana_vm_finish(&s.vm)))
        cli_ana_fail(&a, rc);
    for (size_t i = 0; i < s.nr; i++) {
        struct life *x = &s.v[i];
        uint32_t fn = 0;

        if (by == BY_STACK)
            x->key = x->l.commit_stack;
        else if (by == BY_ORIGIN)
            x->key = x->l.origin;
        else if ((rc = ana_stacks_leaf(cli_ana_stacks(&a), x->l.commit_stack, &fn)))
            cli_ana_fail(&a, rc);
        else
            x->key = fn;
    }
    if (s.nr) /* qsort(NULL, 0) is undefined */
        qsort(s.v, s.nr, sizeof(*s.v), by_group_then_time);
    write_tables(&s, rows, by);
    ana_vm_release(&s.vm);
    free(s.v);
    free(s.samples);
    return cli_ana_close(&a);
}
