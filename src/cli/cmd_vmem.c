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
#include "analysis/vm/ana_vm_window.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
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
    fprintf(
        out,
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
        "  --from T        window start (default start): 1.5s, 250ms, peak, end-1s\n"
        "  --to T          window end, included (default end)\n"
        "  --by KEY        group per stack (default), function (the committing\n"
        "                  function) or origin (call, libc, loader, thread, snapshot)\n"
        "  --origin LIST   only lifetimes committed by these origins: call, libc,\n"
        "                  loader, thread, snapshot (default: all but snapshot)\n"
        "  --intervals N   rows of the totals table (default 10)\n"
        "  --rows N        lifetimes shown per stack group (default 10; 0: all)\n"
        "  --top N         stack groups (default 20; 0: all)\n" CLI_ANA_USAGE CLI_ANA_FRAMES_USAGE);
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
};

static const struct ana_column life_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"range", "range", ANA_CELL_STR},
    {"commit", "commit_ns", ANA_CELL_U64 | ANA_CELL_TIME},
    {"decommit", "decommit_ns", ANA_CELL_STR},
    {"size", "size", ANA_CELL_U64},
    {"impacting size", "impacting_size", ANA_CELL_I64},
    {"charge", "charge", ANA_CELL_STR},
    {"origin", "origin", ANA_CELL_STR},
    {"stack", "stack", ANA_CELL_LIST},
};

static const struct ana_column group_cols[] = {
    {"pid", "pid", ANA_CELL_U64},      {"count", "count", ANA_CELL_U64},
    {"size", "size", ANA_CELL_U64},    {"impacting size", "impacting_size", ANA_CELL_I64},
    {"group", "group", ANA_CELL_LIST},
};

static const struct ana_column total_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"time", "time_ns", ANA_CELL_U64 | ANA_CELL_TIME},
    {"mapped", "mapped_bytes", ANA_CELL_U64},
    {"reserved", "reserved_bytes", ANA_CELL_U64},
    {"committed", "committed_bytes", ANA_CELL_U64},
    {"charge", "commit_charge_bytes", ANA_CELL_U64},
};

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

static void write_tables(struct vmem *s, unsigned rows, enum by by)
{
    struct cli_ana *a = s->a;
    struct ana_vm_window *w = &s->w;
    struct ana_table *lt, *gt, *tt;
    struct ana_vm_group *g;
    long ng = ana_vm_window_groups(w, &g);
    char buf[96];
    unsigned nr;

    if (ng < 0)
        cli_ana_fail(a, (int)ng);
    if (ana_table_create(&lt, life_cols, 9) || ana_table_create(&gt, group_cols, 5) ||
        ana_table_create(&tt, total_cols, 6))
        cli_die("vmem: out of memory");
    for (size_t k = 0; k < (size_t)ng && (!a->top || k < a->top); k++) {
        const struct ana_vm_group *x = &g[k];
        uint32_t pid = fmt_reader_image(a->r, x->image)->pid;
        const char *const *fr, *label;

        if (by == BY_STACK) {
            fr = cli_ana_stack(a, (uint32_t)x->key, false,
                               a->format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
        } else {
            label = by == BY_ORIGIN
                        ? (x->key < FMT_NR_ORIGINS ? fmt_origin_name((unsigned)x->key) : "?")
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
            const struct ana_vm_life *l = &w->v[i];

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
            ana_table_set_str(lt, 6, l->l.charge ? "yes" : "no");
            ana_table_set_str(lt, 7,
                              l->l.origin < FMT_NR_ORIGINS ? fmt_origin_name(l->l.origin) : "?");
            ana_table_set_list(lt, 8, fr, nr);
        }
    }
    for (size_t i = 0; i < w->nr_samples; i++) {
        const struct ana_vm_sample *x = &w->samples[i];

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
        ana_json_u64(&j, w->replay.t0);
        ana_json_key(&j, "to_ns");
        ana_json_u64(&j, w->replay.t1);
        ana_json_key(&j, "peak_committed_bytes");
        ana_json_u64(&j, w->peak_committed);
        ana_json_key(&j, "peak_committed_ns");
        ana_json_u64(&j, w->peak_ns);
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
               ana_time_format(w->replay.t0, buf, sizeof(buf)));
        printf(" to %s\n", ana_time_format(w->replay.t1, buf, sizeof(buf)));
        printf("peak committed: %" PRIu64 " bytes (%s) at %s\n\n", w->peak_committed,
               ana_bytes_format(w->peak_committed, buf, sizeof(buf)),
               ana_time_format(w->peak_ns, buf + 48, 48));
        if (ana_table_nr_rows(gt)) {
            printf("by %s:\n", by == BY_STACK      ? "stack"
                               : by == BY_FUNCTION ? "function"
                                                   : "origin");
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
    unsigned rows = 10;
    enum by by = BY_STACK;
    int c, rc;

    memset(&s, 0, sizeof(s));
    s.w.origins = (1u << FMT_NR_ORIGINS) - 1 - (1u << FMT_ORIGIN_SNAPSHOT);
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
            rows = (unsigned)cli_ana_number(&a, "rows", optarg);
            break;
        case OPT_BY:
            by = (enum by)cli_ana_choice(&a, "by", optarg, by_names);
            break;
        }
    }
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
    cli_ana_scan(&a, UINT64_MAX, ana_vm_replay_event, &s.w.replay);
    if ((rc = ana_vm_replay_finish(&s.w.replay)))
        cli_ana_fail(&a, rc);
    if ((rc = ana_vm_window_key(&s.w, (enum ana_vm_by)by,
                                by == BY_FUNCTION && s.w.nr ? cli_ana_stacks(&a) : NULL)))
        cli_ana_fail(&a, rc);
    write_tables(&s, rows, by);
    ana_vm_window_release(&s.w);
    return cli_ana_close(&a);
}
