/* SPDX-License-Identifier: MIT */
/* memscribe report: the summary people open first. Per process: run time,
 * calls per function, allocations, bytes, peak heap and when, leaked,
 * temporary, peak RSS; then the top call sites by peak contribution,
 * leaked bytes, allocations and temporary allocations. docs/report.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_attach.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_segment.h"
#include "analysis/core/ana_text.h"
#include "analysis/core/ana_time.h"
#include "analysis/core/ana_unmatched.h"
#include "analysis/model/ana_exact.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_reach.h"
#include "analysis/model/ana_scope_json.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_heaps.h"
#include "cli/cli_procs.h"
#include "cli/cli_rows.h"
#include "cli/cli_view.h"
#include "util/util_sort.h"

/* Frames shown per call site in text; JSON and CSV get them all. */

enum { OPT_TEMP_THRESHOLD = CLI_ANA_OPT_FIRST_OWN, OPT_VERIFY, OPT_INDEX };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: memscribe report [options] FILE\n\n"
            "Summarize a trace: run time, calls per allocation function, allocations,\n"
            "bytes allocated, peak heap in use and when, leaked bytes and blocks,\n"
            "temporary allocations, peak RSS; then the top call sites by peak\n"
            "contribution, leaked bytes, number of allocations and temporary\n"
            "allocations. One section per process.\n\n"
            "options:\n"
            "  --top N         call sites per list (default 10; 0: all)\n"
            "  --temporary-threshold N\n"
            "                  loose rule: temporary when the thread made at most N\n"
            "                  other allocations, and any frees, before the free\n"
            "                  (default, strict: nothing else in between)\n"
            "  --verify        also hold each chunk's summary (the index leaks and window\n"
            "                  --index answer from) against its events, as dump --verify,\n"
            "                  and the chunks' totals (report --index's) against the\n"
            "                  replay, number for number: exit 1 if one does not match\n"
            "  --index         answer from each chunk's totals (format 1.10) and the one\n"
            "                  chunk where the heap peaked, not every event: the same\n"
            "                  report, in a fraction of the time; where the trace cannot\n"
            "                  (several processes, a selection, recorded without\n"
            "                  record --totals), a note on stderr says why and the trace\n"
            "                  is replayed\n" CLI_ANA_USAGE CLI_ANA_FRAMES_USAGE CLI_ANA_SUPP_USAGE
            "\nCSV output is the call-site table (every site, with its process); the\n"
            "summary numbers are in the text and JSON forms. docs/report.md explains\n"
            "every number.\n");
}

enum rank { BY_PEAK, BY_LEAKED, BY_ALLOCS, BY_TEMPORARY, NR_RANKS };

static const char *const rank_title[NR_RANKS] = {
    "top call sites by peak contribution",
    "top call sites by leaked bytes",
    "top call sites by number of allocations",
    "top call sites by temporary allocations",
};
static const char *const rank_key[NR_RANKS] = {"peak", "leaked", "allocations", "temporary"};

/* A site's columns: the tables' and, after its ids, the CSV's. */
/* clang-format off */
#define SITE_COLUMNS                                                                               \
    {"peak", "peak_bytes", ANA_CELL_U64 | ANA_CELL_EST},                                           \
    {"leaked", "leaked_bytes", ANA_CELL_I64 | ANA_CELL_EST},                                       \
    {"blocks", "leaked_blocks", ANA_CELL_I64 | ANA_CELL_EST},                                      \
    {"allocs", "allocations", ANA_CELL_U64 | ANA_CELL_EST},                                        \
    {"bytes", "allocated_bytes", ANA_CELL_U64 | ANA_CELL_EST},                                     \
    {"temp", "temporary", ANA_CELL_U64 | ANA_CELL_EST},                                            \
    {"call site", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST}
/* clang-format on */
static const struct ana_column site_cols[] = {SITE_COLUMNS};
static const struct ana_column csv_cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"image", "image", ANA_CELL_U64},
    {"stack", "stack_id", ANA_CELL_U64},
    SITE_COLUMNS,
};

struct report {
    struct cli_ana a;
    struct ana_model *m;
    uint64_t temp_threshold;
    uint32_t *ids; /* scratch: row ids of one group */
    bool loose;    /* --temporary-threshold given: the loose rule */
    bool index;    /* --index: the query prefers the chunks' totals (ana_plan.h) */
    bool verify;   /* --verify: the query's answer holds them against the events */
    /* The rows by process; with the per-program view (a.by_program) also
     * by program and all in one (cli_view.h). */
    struct cli_view procs, progs, all;
    struct ana_heaps heaps; /* a trace with pools: each heap's numbers (cli_heaps.h) */
    bool classes;           /* reachability classes at exit (record --reach) */
    struct ana_reach reach;
    /* The notes the text said (scope_notes' strings), each said once. */
#define NR_SAID 4
    const char *said[NR_SAID];
    unsigned nr_said;
    /* Folded (cli_fold.h): each image's leaks that suppressions list apart,
     * and all of them at supp_total, summed as it was folded (its rows by
     * image keep the tables' only: keep_rows). */
    uint64_t (*supp)[2], supp_total[2];
    uint32_t nr_supp;
};

/* A part of the report: a scope and the rows of its tables (group of
 * view). total: the all-processes scope. */
struct part {
    const struct ana_scope *s;
    const struct cli_view *v;
    uint32_t group;
    bool total;
};

static uint64_t rank_value(const struct ana_site *s, enum rank r)
{
    switch (r) {
    case BY_PEAK:
        return s->peak_bytes;
    case BY_LEAKED:
        return s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;
    case BY_ALLOCS:
        return s->nr_allocs;
    default:
        return s->nr_temporary;
    }
}

struct rank_ctx {
    const struct ana_site *const *rows;
    enum rank r;
};

/* The tables' order by rank r: larger values first, then the lower row
 * id (a view's: the row's lowest stack). keep_rows must pick as this. */
static int rank_order(const struct ana_site *a, uint32_t ida, const struct ana_site *b,
                      uint32_t idb, enum rank r)
{
    uint64_t va = rank_value(a, r), vb = rank_value(b, r);

    if (va != vb)
        return va < vb ? 1 : -1;
    return (ida > idb) - (ida < idb);
}

static int by_rank(const void *x, const void *y, void *arg)
{
    const struct rank_ctx *ctx = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

    return rank_order(ctx->rows[a], a, ctx->rows[b], b, ctx->r);
}

/* The rows of part p with a non-zero value by rank r, in rp->ids: their
 * number, the first `first` of them sorted (0: all). */
static uint32_t ranked(struct report *rp, const struct part *p, enum rank r, uint32_t first)
{
    uint32_t n = 0, nr;
    const uint32_t *ids = cli_view_group(p->v, p->group, &nr);

    for (uint32_t k = 0; k < nr; k++) {
        uint32_t id = ids[k];
        const struct ana_site *s = p->v->rows.row[id];
        if (rank_value(s, r) && !(r == BY_LEAKED && p->v->suppressed[id]))
            rp->ids[n++] = id;
    }
    struct rank_ctx ctx = {p->v->rows.row, r};
    util_sort_first(rp->ids, n, sizeof(*rp->ids), first, by_rank, &ctx);
    return n;
}

static void site_row(struct report *rp, const struct cli_view *v, struct ana_table *t, uint32_t id,
                     unsigned first_col, unsigned max_frames)
{
    const struct ana_site *s = v->rows.row[id];
    unsigned nr;

    ana_table_add_row(t);
    ana_table_set_u64(t, first_col + 0, s->peak_bytes);
    ana_table_set_i64(t, first_col + 1, s->live_bytes);
    ana_table_set_i64(t, first_col + 2, s->live_blocks);
    ana_table_set_u64(t, first_col + 3, s->nr_allocs);
    ana_table_set_u64(t, first_col + 4, s->alloc_bytes);
    if (ana_sample_has_temporary(fmt_reader_sample_bytes(rp->a.r)))
        ana_table_set_u64(t, first_col + 5, s->nr_temporary);
    else
        ana_table_set_none(t, first_col + 5); /* not estimated (ana_sample.h) */
    int c = (int)first_col;
    cli_rows_set_se(&rp->a, t, s, s->peak_bytes,
                    (struct cli_rows_se_cols){c, c + 1, c + 2, c + 3, c + 4});
    const char *const *fr = cli_ana_stack(&rp->a, cli_view_stack(v, id), false, max_frames, &nr);
    if (ana_table_set_stack(t, first_col + 6, fr, nr, rp->a.interest))
        cli_die("report: out of memory");
}

struct fold_rank_ctx {
    const struct ana_fold_row *rows;
    enum rank r;
};

static int by_fold_rank(const void *x, const void *y, void *arg)
{
    const struct fold_rank_ctx *ctx = arg;
    const struct ana_fold_row *a = &ctx->rows[*(const uint32_t *)x];
    const struct ana_fold_row *b = &ctx->rows[*(const uint32_t *)y];

    return rank_order(&a->s, a->stack, &b->s, b->stack, ctx->r);
}

static int by_fold_stack(const void *x, const void *y, void *arg)
{
    const struct ana_fold_row *rows = arg;
    uint32_t a = rows[*(const uint32_t *)x].stack, b = rows[*(const uint32_t *)y].stack;

    return (a > b) - (a < b);
}

/* An image folded (ana_fold_keep_fn): its suppressed leaks summed, and the
 * rows its tables show kept, the first --top by each ranking as ranked()
 * orders them (by value, then by lowest stack: the view's row ids). */
static int keep_rows(void *arg, uint32_t image, const struct ana_fold_row *rows, uint32_t n,
                     bool *keep)
{
    struct report *rp = arg;
    uint32_t *ids = malloc(((size_t)n + 1) * sizeof(*ids));

    if (!ids)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (rows[i].tag && rows[i].s.live_blocks > 0 && rows[i].s.live_bytes > 0) {
            rp->supp[image][0] += (uint64_t)rows[i].s.live_bytes;
            rp->supp[image][1] += (uint64_t)rows[i].s.live_blocks;
            rp->supp_total[0] += (uint64_t)rows[i].s.live_bytes;
            rp->supp_total[1] += (uint64_t)rows[i].s.live_blocks;
        }
    /* The CSV ranks by peak only. */
    for (enum rank r = 0; r < (rp->a.format == CLI_FMT_CSV ? BY_PEAK + 1 : NR_RANKS); r++) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (rank_value(&rows[i].s, r) &&
                !(r == BY_LEAKED && rows[i].tag && rows[i].s.live_blocks > 0))
                ids[k++] = i;
        struct fold_rank_ctx ctx = {rows, r};
        util_sort_first(ids, k, sizeof(*ids), rp->a.top, by_fold_rank, &ctx);
        for (uint32_t i = 0; i < k && (!rp->a.top || i < rp->a.top); i++)
            keep[ids[i]] = true;
    }
    /* The CSV lists after those by peak the rows with allocations but no
     * share of it, lowest stack first (write_csv). */
    uint32_t k = 0;
    for (uint32_t i = 0; rp->a.format == CLI_FMT_CSV && i < n; i++)
        if (!rows[i].s.peak_bytes && rows[i].s.nr_allocs)
            ids[k++] = i;
    util_sort_first(ids, k, sizeof(*ids), rp->a.top, by_fold_stack, (void *)rows);
    for (uint32_t i = 0; i < k && (!rp->a.top || i < rp->a.top); i++)
        keep[ids[i]] = true;
    free(ids);
    return 0;
}

/* A sampled trace has no list by temporary allocations (ana_sample.h). */
static bool rank_shown(const struct report *rp, enum rank r)
{
    return r != BY_TEMPORARY || ana_sample_has_temporary(fmt_reader_sample_bytes(rp->a.r));
}

static struct ana_table *rank_table(struct report *rp, const struct part *p, enum rank r,
                                    unsigned max)
{
    struct ana_table *t;
    uint32_t n = ranked(rp, p, r, rp->a.top);

    if (ana_table_create(&t, site_cols, sizeof(site_cols) / sizeof(site_cols[0])))
        cli_die("report: out of memory");
    if (rp->a.top && n > rp->a.top)
        n = rp->a.top;
    /* rows that would read alike show more of their stacks */
    uint32_t *stacks = malloc(((size_t)n + 1) * sizeof(*stacks));
    if (!stacks)
        cli_die("report: out of memory");
    for (uint32_t i = 0; i < n; i++)
        stacks[i] = cli_view_stack(p->v, rp->ids[i]);
    cli_ana_apart(&rp->a, stacks, n, max);
    free(stacks);
    for (uint32_t i = 0; i < n; i++)
        site_row(rp, p->v, t, rp->ids[i], 0, max);
    return t;
}

/* Where scope s's time in the trace begins: its first event, but in a
 * --keep-last segment not before the segment's start (what it carries in
 * happened before, unseen: docs/aggregate.md, "Flight recorder"). */
static uint64_t seen_from(const struct report *rp, uint64_t first_ns)
{
    uint64_t seg = fmt_reader_info(rp->a.r)->segment_from_ns;

    return first_ns < seg ? seg : first_ns;
}

/* When scope s ran, in ns from the trace's start, the clock of every other
 * time in the report ("peak ... at"): its image's start to its exit or
 * exec, else its first to its last event; in a segment, from its start at
 * the earliest. Returns the run time. */
static uint64_t run_span(struct report *rp, const struct ana_scope *s, uint64_t *from, uint64_t *to)
{
    const struct fmt_image_info *ii = fmt_reader_image(rp->a.r, s->image);

    *from = s->first_ns;
    *to = s->last_ns;
    if (ii && ii->has_start && ii->ended && ii->end_ns >= ii->start_ns) {
        *from = ii->start_ns;
        *to = ii->end_ns;
    }
    *from = seen_from(rp, *from);
    if (*to < *from)
        *to = *from;
    return *to - *from;
}

static uint64_t run_time(struct report *rp, const struct ana_scope *s)
{
    uint64_t from, to;

    return run_span(rp, s, &from, &to);
}

/* A call's count: exact (a trace's own, a sampled trace's counters), or
 * a sampled trace's estimate (heap calls); its mappings are not sampled. */
static uint64_t call_count(const struct ana_scope *s, const struct ana_exact *x, unsigned k,
                           bool *estimated)
{
    *estimated = ana_call_estimated(k);
    if (x->present && k >= FMT_EV_MALLOC && k <= FMT_EV_PVALLOC) {
        *estimated = false;
        return x->v[FMT_CTR_CALLS + k];
    }
    return s->nr_calls[k];
}

static void text_calls(FILE *out, const struct ana_scope *s, const struct ana_exact *x,
                       const char *e)
{
    bool any = false, est;

    fprintf(out, "  calls:              ");
    for (unsigned k = 1; k < ANA_NR_CALLS; k++) {
        uint64_t n = call_count(s, x, k, &est);
        if (!n || !ana_call_name(k))
            continue;
        fprintf(out, "%s%s %s%" PRIu64, any ? ", " : "", ana_call_name(k), est ? e : "", n);
        any = true;
    }
    fprintf(out, "%s\n", any ? "" : "none");
    if (s->nr_start_maps)
        fprintf(out, "  mapped at start:    %" PRIu64 " ranges (a snapshot, not calls)\n",
                s->nr_start_maps);
    if (s->nr_carried)
        fprintf(out,
                "  live at start:      %" PRIu64 " blocks (%" PRIu64
                " bytes): the segment carries them in, not calls\n",
                s->nr_carried, s->carried_bytes);
}

/* The collector's per-thread rings (COL_RING_SIZE) are shared memory of
 * the traced process: its RSS samples count the pages written. One note
 * for every part's peak RSS: a trace note. */
static const char rss_note[] =
    "peak RSS includes memscribe's own ring buffers (up to 4 MiB per traced thread)";

/* What the numbers of scope s do not show by themselves (docs/report.md,
 * "Notes"): at most NR_NOTES lines. */
#define NR_NOTES 1
static unsigned scope_notes(struct report *rp, const struct ana_scope *s,
                            const char *notes[NR_NOTES])
{
    unsigned n = 0;

    /* CPython's small-object allocator, pymalloc, maps arenas of its own
     * and serves objects of up to 512 bytes from them itself. The trace
     * has no environment to say whether PYTHONMALLOC turned it off, but
     * pymalloc maps its first arena while the interpreter starts: an
     * image seen from its start (not attached) without such a mapping
     * (nr_arena_maps) ran without it, and needs no note. */
    const struct fmt_image_info *ii =
        s->image == UINT32_MAX ? NULL : fmt_reader_image(rp->a.r, s->image);
    const char *base = ii && ii->exe ? strrchr(ii->exe, '/') : NULL;
    base = base ? base + 1 : ii ? ii->exe : NULL;
    if (base && !strncmp(base, "python", 6) &&
        strspn(base + 6, "0123456789.") == strlen(base + 6) &&
        (s->nr_arena_maps || fmt_reader_info(rp->a.r)->attached_pid))
        notes[n++] = "CPython: with pymalloc on (the default) objects up to 512 bytes come from "
                     "its own arenas, unseen here; run it with PYTHONMALLOC=malloc to trace them";
    return n;
}

/* Whether part p (an image, a program, or all of them) ended in the
 * trace: what it held at the end is leaked; else (an attach, a trace cut
 * short) it is only live at the end. */
static bool part_ended(const struct report *rp, const struct part *p)
{
    return p->total ? ana_model_all_ended(rp->m) : p->s->ended;
}

/* A part's leaks by class (record --reach), or NULL: a program's (its
 * images' classes are in their own parts) or a trace without them. */
static const struct ana_reach_sum *part_classes(const struct report *rp, const struct part *p)
{
    if (!rp->classes)
        return NULL;
    if (p->total)
        return &rp->reach.total;
    return p->s->image < rp->reach.nr_images ? &rp->reach.image[p->s->image] : NULL;
}

/* ended: the part's processes ended, its classes are their scans' at
 * exit; else the last scan was made while they ran on (record -p's
 * detach, a request): lost then, the program may still free them. */
static void text_classes(const struct ana_reach_sum *c, bool ended, FILE *out)
{
    fprintf(out,
            "  %-19s %" PRIu64 " bytes in %" PRIu64 " blocks (definitely %" PRIu64
            " bytes in %" PRIu64 ", indirectly %" PRIu64 " bytes in %" PRIu64 ")\n",
            ended ? "lost at exit:" : "lost at last scan:", ana_reach_lost_bytes(c),
            ana_reach_lost_blocks(c), c->bytes[FMT_REACH_DEFINITE], c->blocks[FMT_REACH_DEFINITE],
            c->bytes[FMT_REACH_INDIRECT], c->blocks[FMT_REACH_INDIRECT]);
    fprintf(out,
            "  possibly lost:      %" PRIu64 " bytes in %" PRIu64
            " blocks; still reachable: %" PRIu64 " bytes in %" PRIu64 " blocks",
            c->bytes[FMT_REACH_POSSIBLE], c->blocks[FMT_REACH_POSSIBLE],
            c->bytes[FMT_REACH_REACHABLE], c->blocks[FMT_REACH_REACHABLE]);
    if (c->blocks[FMT_REACH_UNKNOWN])
        fprintf(out, "; unclassed: %" PRIu64 " bytes in %" PRIu64 " blocks",
                c->bytes[FMT_REACH_UNKNOWN], c->blocks[FMT_REACH_UNKNOWN]);
    fputc('\n', out);
}

/* The classes' keys, each after prefix ("unsuppressed_": what is left
 * when suppressed leaks are taken out, cli_view_leaks). */
static void json_classes(const struct ana_reach_sum *c, const char *prefix, struct ana_json *j)
{
    char key[96];

    snprintf(key, sizeof(key), "%slost_bytes", prefix);
    ana_json_kv_u64(j, key, ana_reach_lost_bytes(c));
    snprintf(key, sizeof(key), "%slost_blocks", prefix);
    ana_json_kv_u64(j, key, ana_reach_lost_blocks(c));
    for (unsigned k = 0; k < FMT_NR_REACH; k++) {
        snprintf(key, sizeof(key), "%s%s_bytes", prefix, ana_reach_key(k));
        ana_json_kv_u64(j, key, c->bytes[k]);
        snprintf(key, sizeof(key), "%s%s_blocks", prefix, ana_reach_key(k));
        ana_json_kv_u64(j, key, c->blocks[k]);
    }
}

/* Part p's leaks split by the suppressions (cli_view_leaks): the numbers
 * check holds, under the names check's JSON gives them (ana_check.h). */
static void part_leaks(const struct report *rp, const struct part *p, struct cli_view_leaks *out)
{
    const struct ana_reach_sum *cls = part_classes(rp, p);

    cli_view_leaks(p->v, p->group, p->s, cls, cls ? &rp->reach : NULL, out);
}

/* Part p's unmatched frees by cause (ana_unmatched.h), into n[]: its
 * image's, its program's images', or every image's. */
static void part_unmatched(const struct report *rp, const struct part *p,
                           uint64_t n[ANA_UNMATCHED_NR])
{
    memset(n, 0, ANA_UNMATCHED_NR * sizeof(*n));
    for (uint32_t i = 0; i < ana_model_nr_images(rp->m); i++) {
        const struct ana_scope *s = ana_model_image(rp->m, i);
        bool in = p->total ? true
                  : p->v == &rp->progs
                      ? i < rp->a.programs.nr_images && rp->a.programs.of_image[i] == p->group
                      : i == p->group;
        if (in && s && s->seen && s->nr_unmatched_frees)
            n[ana_unmatched_cause_of(rp->a.r, i)] += s->nr_unmatched_frees;
    }
}

/* "unmatched frees: N (addresses never seen allocated: CAUSE)", a count
 * per cause when the part's images had several. */
static void text_unmatched(const struct report *rp, const struct part *p, FILE *out)
{
    uint64_t n[ANA_UNMATCHED_NR];
    unsigned causes = 0;

    part_unmatched(rp, p, n);
    for (unsigned c = 0; c < ANA_UNMATCHED_NR; c++)
        causes += n[c] > 0;
    fprintf(out, "  unmatched frees:    %" PRIu64 " (addresses never seen allocated: ",
            p->s->nr_unmatched_frees);
    for (unsigned c = 0, said = 0; c < ANA_UNMATCHED_NR; c++) {
        if (!n[c])
            continue;
        if (causes > 1)
            fprintf(out, "%s%" PRIu64 " %s", said++ ? "; " : "", n[c],
                    ana_unmatched_words((enum ana_unmatched_cause)c));
        else
            fputs(ana_unmatched_words((enum ana_unmatched_cause)c), out);
    }
    fputs(")\n", out);
}

/* Allocations and failed calls: counted (no mark), or the trace's own
 * (estimates in a sampled trace without counters). */
static void text_allocations(FILE *out, const struct ana_scope *s, const struct ana_exact *x,
                             const char *e)
{
    char b1[64];

    if (x->present) {
        fprintf(out, "  allocations:        %" PRIu64 " (%" PRIu64 " bytes, %s)\n",
                x->v[FMT_CTR_ALLOCS], x->v[FMT_CTR_ALLOC_BYTES],
                ana_bytes_format(x->v[FMT_CTR_ALLOC_BYTES], b1, sizeof(b1)));
        fprintf(out, "  frees:              %" PRIu64 "\n", x->v[FMT_CTR_FREES]);
        if (x->v[FMT_CTR_FAILED])
            fprintf(out, "  failed calls:       %" PRIu64 "\n", x->v[FMT_CTR_FAILED]);
        return;
    }
    fprintf(out, "  allocations:        %s%" PRIu64 " (%s%" PRIu64 " bytes, %s%s)\n", e,
            s->nr_allocs, e, s->alloc_bytes, e, ana_bytes_format(s->alloc_bytes, b1, sizeof(b1)));
    if (s->nr_failed)
        fprintf(out, "  failed calls:       %s%" PRIu64 "\n", e, s->nr_failed);
}

/* The exact counters' heap: usable bytes, its peak and at the end. */
static void text_exact_heap(FILE *out, const struct ana_exact *x)
{
    char b1[64], b2[64], t1[64];

    if (x->has_peak)
        fprintf(out,
                "  heap, usable bytes: peak %" PRIu64 " (%s) by %s, %" PRIu64
                " (%s) at the end (counted)\n",
                x->v[FMT_CTR_PEAK_USABLE],
                ana_bytes_format(x->v[FMT_CTR_PEAK_USABLE], b1, sizeof(b1)),
                ana_time_format(x->peak_ns, t1, sizeof(t1)), x->v[FMT_CTR_HEAP_USABLE],
                ana_bytes_format(x->v[FMT_CTR_HEAP_USABLE], b2, sizeof(b2)));
    else
        fprintf(out,
                "  heap, usable bytes: %" PRIu64 " (%s) at the end (counted; each process's "
                "peak under it)\n",
                x->v[FMT_CTR_HEAP_USABLE],
                ana_bytes_format(x->v[FMT_CTR_HEAP_USABLE], b2, sizeof(b2)));
    if (x->uncounted)
        fprintf(out, "  note: an allocator's own entry points (mallocx, mi_malloc, tc_malloc, "
                     "...) were called: the counts leave them out\n");
}

static void text_scope(struct report *rp, FILE *out, const struct part *p, const char *name)
{
    const struct ana_scope *s = p->s;
    const char *notes[NR_NOTES];
    unsigned nr_notes = scope_notes(rp, s, notes);
    char t1[64], b1[64], b2[64];
    /* A sampled trace's figures are estimates: each is marked (ana_sample.h). */
    const char *e = ana_sample_mark(fmt_reader_sample_bytes(rp->a.r));

    uint64_t from, to, ran = run_span(rp, s, &from, &to);
    char t2[64], t3[64];

    struct ana_exact x;
    ana_exact_of(rp->m, s, &x);

    fprintf(out, "%s\n", name);
    fprintf(out, "  run time:           %s (%s to %s of the trace)\n",
            ana_time_format(ran, t1, sizeof(t1)), ana_time_format(from, t2, sizeof(t2)),
            ana_time_format(to, t3, sizeof(t3)));
    text_calls(out, s, &x, e);
    text_allocations(out, s, &x, e);
    fprintf(out,
            "  peak heap in use:   %s%" PRIu64 " bytes (%s%s) in %s%" PRIu64 " blocks at %s%s\n", e,
            s->peak, e, ana_bytes_format(s->peak, b1, sizeof(b1)), e, s->peak_blocks,
            ana_time_format(s->peak_ns, t1, sizeof(t1)),
            *e ? " (sampled: not an unbiased estimate of the peak)" : "");
    if (x.present)
        text_exact_heap(out, &x);
    fprintf(out, "  %-20s%s%" PRIu64 " bytes (%s%s) in %s%" PRIu64 " blocks\n",
            part_ended(rp, p) ? "leaked:" : "live at the end:", e, s->heap, e,
            ana_bytes_format(s->heap, b1, sizeof(b1)), e, s->live_blocks);
    struct cli_view_leaks lk;
    part_leaks(rp, p, &lk);
    if (lk.supp_blocks) {
        fprintf(
            out,
            "    suppressed:       %s%" PRIu64 " bytes in %s%" PRIu64 " blocks, %s (see memscribe "
            "leaks)\n",
            e, lk.supp_bytes, e, lk.supp_blocks,
            rp->a.supp.nr_files || rp->a.supp.nr_lsan_files ? "matched by the suppression rules"
                                                            : "the runtime's one-time allocations");
        fprintf(out, "    unsuppressed:     %s%" PRIu64 " bytes in %s%" PRIu64 " blocks\n", e,
                lk.bytes, e, lk.blocks);
    }
    if (part_classes(rp, p))
        text_classes(part_classes(rp, p),
                     part_ended(rp, p) &&
                         ana_reach_all_at_exit(rp->a.r, rp->m, p->total ? UINT32_MAX : p->s->image,
                                               UINT64_MAX),
                     out);
    /* Suppressed leaks with lost or possibly lost blocks: what is left. */
    if (lk.classes &&
        (ana_reach_lost_blocks(&lk.supp_cls) || lk.supp_cls.blocks[FMT_REACH_POSSIBLE]))
        fprintf(out,
                "    unsuppressed:     lost %" PRIu64 " bytes in %" PRIu64
                " blocks (definitely %" PRIu64 " bytes), possibly lost %" PRIu64 " bytes\n",
                ana_reach_lost_bytes(&lk.cls), ana_reach_lost_blocks(&lk.cls),
                lk.cls.bytes[FMT_REACH_DEFINITE], lk.cls.bytes[FMT_REACH_POSSIBLE]);
    if (x.present)
        fprintf(out, "  temporary:          %" PRIu64 " allocations (%" PRIu64 " bytes, %s)\n",
                x.v[FMT_CTR_TEMPORARY], x.v[FMT_CTR_TEMPORARY_BYTES],
                ana_bytes_format(x.v[FMT_CTR_TEMPORARY_BYTES], b2, sizeof(b2)));
    else if (!ana_sample_has_temporary(fmt_reader_sample_bytes(rp->a.r)))
        fprintf(out, "  temporary:          " ANA_SAMPLE_NO_TEMPORARY "\n");
    else
        fprintf(out, "  temporary:          %" PRIu64 " allocations (%" PRIu64 " bytes, %s)\n",
                s->nr_temporary, s->temporary_bytes,
                ana_bytes_format(s->temporary_bytes, b2, sizeof(b2)));
    if (s->has_rss)
        fprintf(out, "  peak RSS:           %" PRIu64 " bytes (%s) at %s\n", s->rss_peak,
                ana_bytes_format(s->rss_peak, b1, sizeof(b1)),
                ana_time_format(s->rss_peak_ns, t1, sizeof(t1)));
    else
        fprintf(out, "  peak RSS:           not recorded\n");
    if (s->nr_unmatched_frees)
        text_unmatched(rp, p, out);
    if (s->nr_dropped)
        fprintf(out, "  dropped events:     %" PRIu64 " (numbers may be off)\n", s->nr_dropped);
    /* Each note once in the text: under the first part it concerns. */
    for (unsigned i = 0; i < nr_notes; i++) {
        unsigned k;
        for (k = 0; k < rp->nr_said && rp->said[k] != notes[i]; k++)
            ;
        if (k < rp->nr_said)
            continue;
        if (rp->nr_said < NR_SAID)
            rp->said[rp->nr_said++] = notes[i];
        fprintf(out, "  note: %s\n", notes[i]);
    }
}

static void json_scope(struct report *rp, struct ana_json *j, const struct part *p)
{
    const struct ana_scope *s = p->s;
    ana_json_kv_u64(j, "run_time_ns", run_time(rp, s));
    uint64_t first = seen_from(rp, s->first_ns);

    ana_json_kv_u64(j, "first_ns", first);
    ana_json_kv_u64(j, "last_ns", s->last_ns < first ? first : s->last_ns);
    /* The text's word for leaked_*: "leaked:" if true, else "live at the
     * end:" (a segment before the run's end, an attach, a trace cut short) */
    ana_json_kv_bool(j, "ended", part_ended(rp, p));
    ana_scope_write_json(j, s, fmt_reader_sample_bytes(rp->a.r));
    struct ana_exact x;
    ana_exact_of(rp->m, s, &x);
    if (fmt_reader_sample_bytes(rp->a.r))
        ana_exact_json(j, &x);
    uint64_t n[ANA_UNMATCHED_NR];
    part_unmatched(rp, p, n);
    ana_json_key(j, "unmatched_frees_by_cause");
    ana_json_begin_object(j);
    for (unsigned c = 0; c < ANA_UNMATCHED_NR; c++)
        ana_json_kv_u64(j, ana_unmatched_key((enum ana_unmatched_cause)c), n[c]);
    ana_json_end_object(j);
    struct cli_view_leaks lk;
    part_leaks(rp, p, &lk);
    ana_json_kv_u64(j, "suppressed_leaked_bytes", lk.supp_bytes);
    ana_json_kv_u64(j, "suppressed_leaked_blocks", lk.supp_blocks);
    ana_json_kv_u64(j, "unsuppressed_leaked_bytes", lk.bytes);
    ana_json_kv_u64(j, "unsuppressed_leaked_blocks", lk.blocks);
    if (part_classes(rp, p)) {
        json_classes(part_classes(rp, p), "", j);
        json_classes(&lk.cls, "unsuppressed_", j);
    }
    const char *notes[NR_NOTES];
    unsigned nr_notes = scope_notes(rp, s, notes);
    ana_json_key(j, "notes");
    ana_json_begin_array(j);
    for (unsigned i = 0; i < nr_notes; i++)
        ana_json_str(j, notes[i]);
    ana_json_end_array(j);
}

/* What the whole trace is, a note each (text's "note:" lines, JSON's
 * trace_notes; not on stderr too, notes_in_output): cut short, sampled,
 * attached, aggregated, --keep-last, and the ring buffers in every peak
 * RSS. (Dropped events are said where they were, each part's "dropped
 * events" line, JSON dropped_events.) */
static void trace_notes(struct report *rp, cli_ana_note_fn *fn, void *arg)
{
    if (fmt_reader_incomplete(rp->a.r))
        fn(arg, "the trace is incomplete (the recorder did not finish it); these numbers cover "
                "what it holds");
    cli_ana_trace_notes(&rp->a, fn, arg);
    if (ana_model_total(rp->m)->has_rss)
        fn(arg, rss_note);
}

static void text_note(void *arg, const char *note)
{
    fprintf(arg, "note: %s\n", note);
}

static void json_note(void *arg, const char *note)
{
    ana_json_str(arg, note);
}

/* The head of the text: the trace, its command and its notes. */
static void text_head(struct report *rp, FILE *out)
{
    const struct fmt_trace_info *info = fmt_reader_info(rp->a.r);

    fprintf(out, "memscribe report: %s\n", rp->a.path);
    if (info->command_len) {
        fputs("command: ", out);
        /* The words, NUL-separated, escaped (the program's argv may hold
         * terminal escapes and any bytes). */
        for (uint32_t i = 0, end; i < info->command_len; i = end + 1) {
            for (end = i; end < info->command_len && info->command[end]; end++)
                ;
            ana_text_put(out, info->command + i, end - i);
            if (end + 1 < info->command_len)
                fputc(' ', out);
        }
        fputc('\n', out);
    }
    trace_notes(rp, text_note, out);
}

/* A part's numbers and its tables of call sites; image: its heaps' lines
 * (UINT32_MAX: none). */
static void text_part(struct report *rp, FILE *out, const struct part *p, const char *name,
                      uint32_t image)
{
    fputc('\n', out);
    text_scope(rp, out, p, name);
    if (image != UINT32_MAX)
        cli_heaps_text(&rp->a, &rp->heaps, image, out);
    for (enum rank r = 0; r < NR_RANKS; r++) {
        if (!rank_shown(rp, r))
            continue;
        struct ana_table *t = rank_table(rp, p, r, CLI_ANA_TEXT_FRAMES);
        if (ana_table_nr_rows(t)) {
            fprintf(out, "\n  %s:\n",
                    r == BY_LEAKED && !part_ended(rp, p) ? "top call sites by bytes live at the end"
                                                         : rank_title[r]);
            cli_ana_table(&rp->a, t, out, "    ", true);
        }
        ana_table_destroy(t);
    }
}

/* The per-process view: a part per process, the tree's sum last. */
static void text_by_process(struct report *rp, FILE *out)
{
    char name[256];

    cli_procs_text(&rp->a, rp->m, out);
    for (uint32_t i = 0; i < ana_model_nr_images(rp->m); i++) {
        struct part p = {ana_model_image(rp->m, i), &rp->procs, i, false};
        if (!p.s->seen)
            continue;
        cli_ana_image_name(&rp->a, i, name, sizeof(name));
        text_part(rp, out, &p, name, i);
    }
    if (!ana_model_nr_seen(rp->m))
        fprintf(out, "\nno events of the selected processes (--pid)\n");
    if (ana_model_nr_seen(rp->m) > 1) {
        struct part p = {ana_model_total(rp->m), &rp->procs, UINT32_MAX, true};
        fputc('\n', out);
        text_scope(rp, out, &p, "all processes");
    }
}

/* Programs by peak, largest first (then in order of their first image). */
static int by_program_peak(const void *x, const void *y, void *arg)
{
    const struct ana_model *m = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t va = ana_model_program(m, a)->peak, vb = ana_model_program(m, b)->peak;

    if (va != vb)
        return va < vb ? 1 : -1;
    return (a > b) - (a < b);
}

/* The programs seen, largest peak first, in rp->ids; their number. */
static uint32_t programs_ranked(struct report *rp)
{
    uint32_t n = 0;

    for (uint32_t k = 0; k < ana_model_nr_programs(rp->m); k++)
        if (ana_model_program(rp->m, k)->seen)
            rp->ids[n++] = k;
    util_sort_first(rp->ids, n, sizeof(*rp->ids), 0, by_program_peak, rp->m);
    return n;
}

/* A program's part: the program's scope, or its one process's. */
static struct part program_part(const struct report *rp, uint32_t k)
{
    const struct ana_program *pg = &rp->a.programs.v[k];

    return (struct part){pg->nr_images > 1 ? ana_model_program(rp->m, k)
                                           : ana_model_image(rp->m, pg->first_image),
                         &rp->progs, k, false};
}

/* A program's name: its executable and how many processes ran it, or its
 * one process's name. */
static void program_name(struct report *rp, uint32_t k, char *buf, size_t size)
{
    const struct ana_program *pg = &rp->a.programs.v[k];

    if (pg->nr_images <= 1)
        cli_ana_image_name(&rp->a, pg->first_image, buf, size);
    else
        cli_ana_program_name(&rp->a, k, false, buf, size);
}

/* The per-program view (docs/report.md, "Process trees"): the tree's sum
 * and its call sites first, the programs by peak, a part per program (its
 * processes merged), the process table last. */
static void text_by_program(struct report *rp, FILE *out)
{
    struct part all = {ana_model_total(rp->m), &rp->all, 0, true};
    uint32_t n = programs_ranked(rp);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
    char name[256];

    if (!order)
        cli_die("report: out of memory");
    memcpy(order, rp->ids, (size_t)n * sizeof(*order));
    text_part(rp, out, &all, "all processes", UINT32_MAX);
    cli_programs_text(&rp->a, rp->m, order, n, out);
    for (uint32_t i = 0; i < n; i++) {
        struct part p = program_part(rp, order[i]);
        const struct ana_program *pg = &rp->a.programs.v[order[i]];
        program_name(rp, order[i], name, sizeof(name));
        text_part(rp, out, &p, name, pg->nr_images > 1 ? UINT32_MAX : pg->first_image);
    }
    free(order);
    cli_procs_text(&rp->a, rp->m, out);
}

static void write_text(struct report *rp, FILE *out)
{
    text_head(rp, out);
    if (rp->a.by_program)
        text_by_program(rp, out);
    else
        text_by_process(rp, out);
}

/* The "top" object of a part: its tables by each rank. */
static void json_top(struct report *rp, struct ana_json *j, const struct part *p)
{
    ana_json_key(j, "top");
    ana_json_begin_object(j);
    for (enum rank r = 0; r < NR_RANKS; r++) {
        ana_json_key(j, rank_key[r]);
        if (!rank_shown(rp, r)) {
            ana_json_null(j);
            continue;
        }
        struct ana_table *t = rank_table(rp, p, r, 0);
        ana_table_write_json(t, j);
        ana_table_destroy(t);
    }
    ana_json_end_object(j);
}

/* "programs": each program of the per-program view, largest peak first. */
static void json_programs(struct report *rp, struct ana_json *j)
{
    uint32_t n = programs_ranked(rp);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));

    if (!order)
        cli_die("report: out of memory");
    memcpy(order, rp->ids, (size_t)n * sizeof(*order));
    ana_json_key(j, "programs");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < n; i++) {
        struct part p = program_part(rp, order[i]);
        ana_json_begin_object(j);
        cli_ana_program_json(&rp->a, j, order[i]);
        ana_json_key(j, "images");
        ana_json_begin_array(j);
        for (uint32_t k = 0; k < rp->a.programs.nr_images; k++)
            if (rp->a.programs.of_image[k] == order[i] && ana_model_image(rp->m, k) &&
                ana_model_image(rp->m, k)->seen)
                ana_json_u64(j, k);
        ana_json_end_array(j);
        json_scope(rp, j, &p);
        json_top(rp, j, &p);
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
    free(order);
}

static void write_json(struct report *rp, FILE *out)
{
    struct ana_json j;
    struct fmt_trace_counts c;

    fmt_reader_counts(rp->a.r, &c);
    ana_json_init(&j, out, true);
    ana_json_begin_object(&j);
    ana_json_kv_str(&j, "file", rp->a.path);
    ana_json_kv_bool(&j, "incomplete", fmt_reader_incomplete(rp->a.r));
    ana_json_kv_u64(&j, "dropped_events", c.nr_dropped);
    ana_sample_json(&j, fmt_reader_sample_bytes(rp->a.r));
    ana_attach_json(&j, fmt_reader_info(rp->a.r)->attached_pid);
    ana_aggregate_json(&j, fmt_reader_info(rp->a.r));
    ana_segment_json(&j, fmt_reader_info(rp->a.r));
    ana_json_key(&j, "trace_notes");
    ana_json_begin_array(&j);
    trace_notes(rp, json_note, &j);
    ana_json_end_array(&j);
    cli_procs_json(&rp->a, rp->m, &j);
    ana_json_key(&j, "processes");
    ana_json_begin_array(&j);
    for (uint32_t i = 0; i < ana_model_nr_images(rp->m); i++) {
        struct part p = {ana_model_image(rp->m, i), &rp->procs, i, false};
        if (!p.s->seen)
            continue;
        ana_json_begin_object(&j);
        cli_ana_image_json(&rp->a, &j, i);
        json_scope(rp, &j, &p);
        cli_heaps_json(&rp->a, &rp->heaps, i, &j);
        json_top(rp, &j, &p);
        ana_json_end_object(&j);
    }
    ana_json_end_array(&j);
    if (rp->a.by_program)
        json_programs(rp, &j);
    ana_json_key(&j, "total");
    ana_json_begin_object(&j);
    if (rp->a.by_program) {
        struct part all = {ana_model_total(rp->m), &rp->all, 0, true};
        json_scope(rp, &j, &all);
        json_top(rp, &j, &all);
    } else {
        struct part all = {ana_model_total(rp->m), &rp->procs, UINT32_MAX, true};
        json_scope(rp, &j, &all);
    }
    ana_json_end_object(&j);
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("report: writing the output failed");
}

static void write_csv(struct report *rp, FILE *out)
{
    struct ana_table *t;

    if (ana_table_create(&t, csv_cols, sizeof(csv_cols) / sizeof(csv_cols[0])))
        cli_die("report: out of memory");
    for (uint32_t i = 0; i < ana_model_nr_images(rp->m); i++) {
        struct part p = {ana_model_image(rp->m, i), &rp->procs, i, false};
        if (!p.s->seen)
            continue;
        uint32_t n = ranked(rp, &p, BY_PEAK, rp->a.top), nr;
        const uint32_t *ids = cli_view_group(&rp->procs, i, &nr);
        /* Sites with no peak share but allocations still belong in it. */
        for (uint32_t k = 0; k < nr; k++) {
            const struct ana_site *st = rp->procs.rows.row[ids[k]];
            if (!st->peak_bytes && st->nr_allocs)
                rp->ids[n++] = ids[k];
        }
        if (rp->a.top && n > rp->a.top)
            n = rp->a.top;
        for (uint32_t k = 0; k < n; k++) {
            site_row(rp, &rp->procs, t, rp->ids[k], 3, 0);
            ana_table_set_u64(t, 0, p.s->pid);
            ana_table_set_u64(t, 1, i);
            ana_table_set_u64(t, 2, cli_rows_lowest(&rp->procs.rows, rp->ids[k]));
        }
    }
    cli_ana_table(&rp->a, t, out, "", true);
    ana_table_destroy(t);
}

/* The options, then the trace opened: what report asks. */
static void parse(struct report *rp, int argc, char **argv)
{
    static const struct option own[] = {
        {"temporary-threshold", required_argument, NULL, OPT_TEMP_THRESHOLD},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"index", no_argument, NULL, OPT_INDEX},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_ANALYSIS | CLI_TAKES_FRAMES | CLI_TAKES_SUPP |
                                    CLI_TAKES_PROGRAMS,
                           .own = own,
                           .usage = usage};
    int c;

    cli_ana_init(&rp->a, "report", 10);
    while ((c = cli_getopt(&g, &rp->a, argc, argv)) != -1) {
        if (c == OPT_TEMP_THRESHOLD) {
            rp->temp_threshold = cli_ana_number(&rp->a, "--temporary-threshold", optarg);
            rp->loose = true;
        }
        if (c == OPT_VERIFY)
            rp->verify = true;
        if (c == OPT_INDEX)
            rp->index = true;
    }
    if (rp->verify && rp->index)
        cli_usage_error("report: --verify replays every event to check the index; "
                        "--index does not read them");
    /* It may fold the tree's processes (cli_fold.h). */
    rp->a.stacks_later = true;
    /* Text and JSON say the trace's notes; CSV has no place for them. */
    rp->a.notes_in_output = rp->a.format != CLI_FMT_CSV;
    cli_ana_open(&rp->a, argc, argv, optind);
    if (rp->loose)
        cli_ana_want_temporary(&rp->a, "--temporary-threshold");
    /* The recorder decided every temporary by the strict rule; the reader
     * lacks the calls another rule needs (docs/aggregate.md). */
    if (rp->loose && fmt_reader_info(rp->a.r)->aggregate_ns)
        cli_die("report: %s: --temporary-threshold: an aggregated trace's temporary allocations "
                "were counted by the recorder under the strict rule; the calls another rule "
                "needs are not in it (docs/aggregate.md)",
                rp->a.path);
}

/* The views of the answer (cli_view.h): by process, and with the
 * per-program view or a fold by program and all in one. */
static void make_views(struct report *rp, bool need_procs)
{
    if (need_procs)
        cli_view_answer(&rp->a, rp->m, CLI_ROWS_BY_IMAGE, &rp->procs);
    if (need_procs && rp->a.fold) { /* a fold keeps each image's first rows only */
        uint32_t nr = ana_model_nr_images(rp->m);
        rp->supp[nr][0] = rp->supp_total[0];
        rp->supp[nr][1] = rp->supp_total[1];
        rp->procs.supp_sums = (const uint64_t(*)[2])rp->supp;
    }
    if (rp->a.fold || rp->a.by_program) {
        cli_view_answer(&rp->a, rp->m, CLI_ROWS_BY_PROGRAM, &rp->progs);
        cli_view_answer(&rp->a, rp->m, CLI_ROWS_BY_ALL, &rp->all);
    }
    /* Scratch for a table's rows or the programs: the most of any view. */
    size_t nr_ids = ana_model_nr_programs(rp->m);
    const struct cli_view *views[] = {&rp->procs, &rp->progs, &rp->all};
    for (size_t k = 0; k < sizeof(views) / sizeof(views[0]); k++)
        if (views[k]->rows.nr > nr_ids)
            nr_ids = views[k]->rows.nr;
    if (!(rp->ids = malloc((nr_ids + 1) * sizeof(*rp->ids))))
        cli_die("report: out of memory");
}

/* The model and its views: what report answers. */
static void answer(struct report *rp)
{
    rp->classes = ana_reach_present(rp->a.r);
    struct ana_model_options mo = {.filter = &rp->a.filter,
                                   .keep_blocks = rp->classes,
                                   .loose_temporary = rp->loose,
                                   .temporary_threshold = rp->temp_threshold};
    cli_ana_programs(&rp->a, &mo);
    /* The per-program view's rows can be folded at each image's end
     * (cli_fold.h); the JSON's and CSV's tables by process too, each
     * keeping its first rows (keep_rows). With --top 0 those are every
     * row of every process, which the whole model holds in less. */
    bool need_procs = !rp->a.by_program || rp->a.format != CLI_FMT_TEXT;
    /* Without the per-program view only the rows by process are read. */
    rp->a.fold_alone = !rp->a.by_program;
    bool folded = need_procs && !rp->a.top ? cli_fold_can(&rp->a, true)
                                           : cli_fold_setup(&rp->a, &mo, CLI_FOLD_ROWS);
    if (folded && need_procs) {
        rp->nr_supp = fmt_reader_nr_images(rp->a.r);
        if (!(rp->supp = calloc((size_t)rp->nr_supp + 1, sizeof(*rp->supp))))
            cli_die("report: out of memory");
        rp->a.fold->calls.image_rows = keep_rows;
        rp->a.fold->calls.image_arg = rp;
    }
    /* The text of the per-program view reads no process's own shares: the
     * totals route then replays no process's peak chunk (a build's many). */
    struct ana_query q = {.mo = &mo,
                          .until_ns = UINT64_MAX,
                          .prefer_index = rp->index,
                          .verify = rp->verify,
                          .shares =
                              need_procs ? ANA_SHARES_EVERY : ANA_SHARES_PROGRAM | ANA_SHARES_ALL};
    rp->m = cli_ana_answer(&rp->a, &q);
    if (rp->classes && ana_reach_build(&rp->reach, rp->a.r, rp->m))
        cli_die("report: out of memory");
    cli_heaps_load(&rp->a, &rp->heaps, UINT64_MAX);
    cli_ana_supp_load(&rp->a);
    make_views(rp, need_procs);
}

int cmd_report(int argc, char **argv)
{
    struct report rp = {0};

    parse(&rp, argc, argv);
    answer(&rp);
    if (rp.a.format == CLI_FMT_JSON)
        write_json(&rp, stdout);
    else if (rp.a.format == CLI_FMT_CSV)
        write_csv(&rp, stdout);
    else
        write_text(&rp, stdout);
    free(rp.ids);
    free(rp.supp);
    cli_view_release(&rp.procs);
    cli_view_release(&rp.progs);
    cli_view_release(&rp.all);
    ana_heaps_release(&rp.heaps);
    ana_reach_release(&rp.reach);
    ana_model_destroy(rp.m);
    return cli_ana_close(&rp.a);
}
