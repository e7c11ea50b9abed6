/* SPDX-License-Identifier: MIT */
/* memscribe replay: run one process's heap calls from a trace again under
 * other allocators and compare time per call, peak RSS, overhead and page
 * faults side by side. docs/replay.md. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/pictures/ana_plot_lines.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"
#include "cli/cli_replay.h"
#include "util/util_size.h"

#define MAX_ALLOCATORS 16

enum {
    OPT_ALLOCATOR = CLI_ANA_OPT_FIRST_OWN,
    OPT_REPEAT,
    OPT_TOUCH,
    OPT_TOUCH_LIMIT,
    OPT_SAMPLES,
    OPT_SVG,
    OPT_SCRIPT,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe replay [options] FILE\n\n"
                 "Run the heap calls of one process of the trace again, with the same sizes,\n"
                 "alignments and order per thread, under each allocator, and compare time per\n"
                 "call, peak RSS, RSS against the heap in use, and page faults.\n\n"
                 "options:\n"
                 "  --allocator A   glibc (the default), jemalloc, tcmalloc, mimalloc, all (those\n"
                 "                  four), or the path of a .so that provides malloc; repeatable\n"
                 "  --pid P         the process to replay (default: the first one traced)\n"
                 "  --repeat N      runs per allocator; time per call is their median (default 3)\n"
                 "  --touch T       what is written into each new block: first (its first byte,\n"
                 "                  default) or pages (a byte every 4096)\n"
                 "  --touch-limit S with --touch pages: live blocks written in full stay under\n"
                 "                  S bytes (64M, 2G; default half the memory available at the\n"
                 "                  start); a block past it gets its first byte only\n"
                 "  --samples N     RSS samples over the trace's time (default 200)\n"
                 "  --svg FILE      RSS over time under every allocator, one picture\n"
                 "  --script FILE   write the worker's input to FILE instead of running it\n"
                 "                  (lib/memscribe/memscribe-replay < FILE replays it)\n"
                 "  --format=F      text (default), json or csv\n"
                 "  -h, --help      this text\n");
}

/* MemAvailable of /proc/meminfo in bytes (0 if unknown: no bound). */
static uint64_t mem_available(void)
{
    char line[256];
    unsigned long long kib = 0;
    FILE *f = fopen("/proc/meminfo", "r");

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (uint64_t)kib * 1024;
}

struct allocator {
    const char *name;
    const char *preload; /* NULL: glibc */
    const char *stem;    /* what malloc's module must be called */
};

static const struct allocator known[] = {
    {"glibc", NULL, "libc.so"},
    {"jemalloc", "libjemalloc.so.2", "libjemalloc.so"},
    {"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc_minimal.so"},
    {"mimalloc", "libmimalloc.so.2", "libmimalloc.so"},
};

struct opts {
    struct allocator alloc[MAX_ALLOCATORS];
    unsigned nr_alloc;
    long pid;
    unsigned repeat;
    const char *svg, *script;
};

static void add_allocator(struct opts *o, const struct allocator *a)
{
    if (o->nr_alloc == MAX_ALLOCATORS)
        cli_usage_error("replay: at most %d allocators", MAX_ALLOCATORS);
    o->alloc[o->nr_alloc++] = *a;
}

static void parse_allocator(struct opts *o, const char *arg)
{
    if (!strcmp(arg, "all")) {
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            add_allocator(o, &known[i]);
        return;
    }
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (!strcmp(arg, known[i].name)) {
            add_allocator(o, &known[i]);
            return;
        }
    }
    if (!strchr(arg, '/'))
        cli_usage_error("replay: unknown allocator '%s' (glibc, jemalloc, tcmalloc, mimalloc, "
                        "all, or a path to a .so; see --help)",
                        arg);
    char *path = realpath(arg, NULL);
    if (!path)
        cli_die("replay: allocator %s: %s", arg, strerror(errno));
    add_allocator(o, &(struct allocator){arg, path, NULL});
}

/* The worker says which module its malloc came from: a name that did not
 * load (LD_PRELOAD only warns) must not pass for a result. */
static void check_library(const struct allocator *a, const struct cli_replay_run *run)
{
    const char *base = strrchr(run->library, '/');
    const char *old = getenv("LD_PRELOAD");

    base = base ? base + 1 : run->library;
    if (old && *old)
        return; /* something else is preloaded first (a collector recording us) */
    if (a->stem) {
        if (!strncmp(base, a->stem, strlen(a->stem)))
            return;
    } else {
        char *real = realpath(run->library, NULL);
        int same = real && !strcmp(real, a->preload);

        free(real);
        if (same)
            return;
    }
    cli_die("replay: allocator %s: the replay's malloc came from %s%s", a->name, run->library,
            a->stem && a->preload ? " (is it installed? scripts/setup.sh)" : "");
}

static double per_call(const struct cli_replay_run *r)
{
    return r->calls ? (double)r->cpu_ns / (double)r->calls : 0;
}

static int by_time(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

struct result {
    struct cli_replay_run run; /* the first run: memory, faults, samples */
    double ns_per_call;        /* median over the runs */
};

static const struct ana_column cols[] = {
    {"allocator", "allocator", ANA_CELL_STR},
    {"ns/call", "ns_per_call", ANA_CELL_U64},
    {"peak RSS", "peak_rss", ANA_CELL_U64},
    {"RSS@peak", "rss_at_peak", ANA_CELL_U64},
    {"heap@peak", "heap_at_peak", ANA_CELL_U64},
    {"over@peak", "overhead_at_peak", ANA_CELL_I64},
    {"RSS@end", "rss_at_end", ANA_CELL_U64},
    {"heap@end", "heap_at_end", ANA_CELL_U64},
    {"over@end", "overhead_at_end", ANA_CELL_I64},
    {"RSS@start", "rss_at_start", ANA_CELL_U64},
    {"faults", "minor_faults", ANA_CELL_U64},
    {"major", "major_faults", ANA_CELL_U64},
    {"calls", "calls", ANA_CELL_U64},
    {"failed", "failed", ANA_CELL_U64},
    {"waits", "cross_thread_waits", ANA_CELL_U64},
    {"live blocks", "live_blocks", ANA_CELL_U64},
    {"live bytes", "live_bytes", ANA_CELL_U64},
    {"partly written", "partly_written", ANA_CELL_U64},
    {"library", "library", ANA_CELL_STR},
    {"emulated", "emulated", ANA_CELL_STR},
};
#define NR_COLS (sizeof(cols) / sizeof(cols[0]))
#define NR_TEXT_COLS 12 /* text shows up to the major faults */
#define COL_OVER_PEAK 5
#define COL_OVER_END 8
#define COL_FAILED 13

/* Did a replay call fail that succeeded in the trace, under any allocator?
 * Then the heap replayed is not the trace's: the overheads measure
 * nothing and are left blank, text shows the failed column, and replay
 * exits 1. */
static int any_failed(const struct opts *o, const struct result *res)
{
    for (unsigned i = 0; i < o->nr_alloc; i++)
        if (res[i].run.failed)
            return 1;
    return 0;
}

/* The table: every column (nr_cols NR_COLS), or text's first NR_TEXT_COLS
 * and then, if with_failed, the failed column (text_cols, which must
 * outlive the table, holds that selection). */
static struct ana_table *make_table(const struct opts *o, const struct cli_replay_plan *p,
                                    const struct result *res, unsigned nr_cols, int with_failed,
                                    struct ana_column *text_cols)
{
    struct ana_table *t;
    const struct ana_column *c = cols;

    if (with_failed) {
        memcpy(text_cols, cols, nr_cols * sizeof(*cols));
        text_cols[nr_cols] = cols[COL_FAILED];
        c = text_cols;
    }
    if (ana_table_create(&t, c, nr_cols + (with_failed ? 1 : 0)))
        cli_die("replay: out of memory");
    for (unsigned i = 0; i < o->nr_alloc; i++) {
        const struct cli_replay_run *r = &res[i].run;
        uint64_t at_peak = r->rss[p->peak_point], at_end = r->rss[p->nr_points - 1];
        uint64_t v[NR_COLS] = {0,
                               (uint64_t)(res[i].ns_per_call + 0.5),
                               r->peak_rss,
                               at_peak,
                               p->peak_heap,
                               0,
                               at_end,
                               p->end_heap,
                               0,
                               r->rss[0],
                               r->minflt - r->flt[0],
                               r->majflt,
                               r->calls,
                               r->failed,
                               r->waits,
                               r->live_blocks,
                               r->live_bytes,
                               r->partly};

        ana_table_add_row(t);
        ana_table_set_str(t, 0, o->alloc[i].name);
        for (unsigned k = 1; k < nr_cols && k < NR_COLS - 2; k++)
            ana_table_set_u64(t, k, v[k]);
        if (with_failed)
            ana_table_set_u64(t, nr_cols, r->failed);
        if (r->failed) {
            ana_table_set_none(t, COL_OVER_PEAK);
            ana_table_set_none(t, COL_OVER_END);
        } else {
            ana_table_set_i64(t, COL_OVER_PEAK, (int64_t)at_peak - (int64_t)p->peak_heap);
            ana_table_set_i64(t, COL_OVER_END, (int64_t)at_end - (int64_t)p->end_heap);
        }
        if (nr_cols == NR_COLS) {
            ana_table_set_str(t, NR_COLS - 2, r->library);
            ana_table_set_str(t, NR_COLS - 1, r->emulated);
        }
    }
    return t;
}

static void write_svg(const char *path, const struct opts *o, const struct cli_replay_plan *p,
                      const struct result *res, uint32_t pid)
{
    uint64_t *ts = calloc(p->nr_points, sizeof(*ts)), *heap = calloc(p->nr_points, sizeof(*heap));
    struct ana_plot_series *s = calloc(o->nr_alloc, sizeof(*s));
    char sub[128];
    FILE *f;
    int rc;

    if (!ts || !heap || !s)
        cli_die("replay: out of memory");
    for (uint64_t i = 0; i < p->nr_points; i++) {
        ts[i] = p->points[i].ts_ns;
        heap[i] = p->points[i].heap;
    }
    for (unsigned i = 0; i < o->nr_alloc; i++)
        s[i] = (struct ana_plot_series){o->alloc[i].name, res[i].run.rss};
    snprintf(sub, sizeof(sub), "pid %" PRIu32 ": %" PRIu64 " heap calls replayed", pid,
             p->nr_calls);
    struct ana_plot_lines pl = {.ts_ns = ts,
                                .nr_points = p->nr_points,
                                .end_ns = p->last_ns,
                                .heap = heap,
                                .series = s,
                                .nr_series = o->nr_alloc,
                                .title = "RSS of the replay under each allocator",
                                .subtitle = sub};
    f = cli_output_stream("replay", path);
    rc = ana_plot_lines_svg(&pl, f);
    if (fclose(f) && !rc)
        rc = -errno;
    if (rc)
        cli_die("replay: %s: %s", path, strerror(-rc));
    free(ts);
    free(heap);
    free(s);
}

static void write_json(struct cli_ana *a, const struct opts *o, const struct cli_replay_plan *p,
                       const struct result *res, uint32_t pid, uint32_t touch)
{
    struct ana_json j;
    struct ana_table *t = make_table(o, p, res, NR_COLS, 0, NULL);

    ana_json_init(&j, stdout, true);
    ana_json_begin_object(&j);
    ana_json_kv_str(&j, "trace", a->path);
    ana_json_kv_u64(&j, "pid", pid);
    ana_json_kv_u64(&j, "calls", p->nr_calls);
    ana_json_kv_u64(&j, "threads", p->nr_threads);
    ana_json_kv_u64(&j, "unknown_frees", p->unknown_frees);
    ana_json_kv_u64(&j, "unknown_reallocs", p->unknown_reallocs);
    ana_json_kv_u64(&j, "failed_in_trace", p->failed);
    ana_json_kv_u64(&j, "heap_peak", p->peak_heap);
    ana_json_kv_u64(&j, "heap_peak_ns", p->peak_ns);
    ana_json_kv_u64(&j, "heap_end", p->end_heap);
    ana_json_kv_u64(&j, "blocks_end", p->end_blocks);
    ana_json_kv_str(&j, "touch", touch == RPL_TOUCH_PAGES ? "pages" : "first");
    if (touch == RPL_TOUCH_PAGES)
        ana_json_kv_u64(&j, "touch_limit", p->touch_limit);
    ana_json_kv_u64(&j, "repeat", o->repeat);
    ana_json_key(&j, "allocators");
    ana_table_write_json(t, &j);
    ana_json_key(&j, "samples");
    ana_json_begin_array(&j);
    for (uint64_t i = 0; i < p->nr_points; i++) {
        ana_json_begin_object(&j);
        ana_json_kv_u64(&j, "ts_ns", p->points[i].ts_ns);
        ana_json_kv_u64(&j, "heap", p->points[i].heap);
        ana_json_key(&j, "rss");
        ana_json_begin_array(&j);
        for (unsigned k = 0; k < o->nr_alloc; k++)
            ana_json_u64(&j, res[k].run.rss[i]);
        ana_json_end_array(&j);
        ana_json_end_object(&j);
    }
    ana_json_end_array(&j);
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("replay: writing JSON failed");
    ana_table_destroy(t);
}

static void write_text(struct cli_ana *a, const struct opts *o, const struct cli_replay_plan *p,
                       const struct result *res, uint32_t pid, uint32_t touch)
{
    struct ana_column text_cols[NR_TEXT_COLS + 1];
    int failed = any_failed(o, res);
    struct ana_table *t = make_table(o, p, res, NR_TEXT_COLS, failed, text_cols);

    printf("replay of pid %" PRIu32 " from %s: %" PRIu64 " heap calls by %" PRIu64 " threads\n",
           pid, a->path, p->nr_calls, p->nr_threads);
    if (p->unknown_frees || p->unknown_reallocs)
        printf("not replayed: %" PRIu64 " frees of blocks this process did not allocate (a fork "
               "child's inherited blocks); %" PRIu64 " reallocs of such blocks replayed as "
               "mallocs\n",
               p->unknown_frees, p->unknown_reallocs);
    if (p->failed)
        printf("not replayed: %" PRIu64 " calls that failed in the trace\n", p->failed);
    printf("heap in use (requested bytes): peak %" PRIu64 " at %.6f s, end %" PRIu64 " in %" PRIu64
           " blocks\n",
           p->peak_heap, (double)p->peak_ns / 1e9, p->end_heap, p->end_blocks);
    printf("each new block gets %s written; ns/call is the replay threads' CPU time while "
           "running calls, per call, median of %u runs; memory from the first run; over = RSS "
           "- heap (the worker's own ~RSS@start included); faults counted from the start\n\n",
           touch == RPL_TOUCH_PAGES ? "a byte every 4096 bytes" : "its first byte", o->repeat);
    cli_ana_table(a, t, stdout, "", true);
    ana_table_destroy(t);
    for (unsigned i = 0; i < o->nr_alloc; i++) {
        const struct cli_replay_run *r = &res[i].run;

        if (r->failed)
            printf("%s: %" PRIu64 " calls failed that succeeded in the trace: the heap replayed is "
                   "not the trace's, so its overheads are left blank\n",
                   o->alloc[i].name, r->failed);
        if (r->partly)
            printf("%s: %" PRIu64 " blocks got their first byte written only: the blocks written "
                   "in full already held the --touch-limit of %" PRIu64 " bytes\n",
                   o->alloc[i].name, r->partly, p->touch_limit);
    }
    for (unsigned i = 0; i < o->nr_alloc; i++)
        if (res[i].run.emulated[0])
            printf("%s lacks %s: made from its posix_memalign and realloc\n", o->alloc[i].name,
                   res[i].run.emulated);
}

/* --touch's value. */
static enum rpl_touch parse_touch(const char *arg)
{
    if (!strcmp(arg, "first"))
        return RPL_TOUCH_FIRST;
    if (!strcmp(arg, "pages"))
        return RPL_TOUCH_PAGES;
    cli_usage_error("replay: unknown --touch '%s' (first or pages)", arg);
}

/* The process --pid chooses (the first without it) and its heap calls
 * into plan; its pid. */
static uint32_t take_calls(struct cli_ana *a, const struct opts *o, struct cli_replay_plan *plan)
{
    uint32_t pid;
    int rc;

    plan->image = UINT32_MAX;
    for (uint32_t i = 0; i < fmt_reader_nr_images(a->r); i++) {
        const struct fmt_image_info *im = fmt_reader_image(a->r, i);

        if (o->pid < 0 || im->pid == (uint32_t)o->pid) {
            plan->image = i;
            break;
        }
    }
    if (plan->image == UINT32_MAX)
        cli_die("replay: %s: no process %ld in the trace", a->path, o->pid);
    pid = fmt_reader_image(a->r, plan->image)->pid;
    rc = cli_replay_stream(a->r, plan, -1);
    if (rc)
        cli_ana_fail(a, rc);
    if (!plan->nr_calls)
        cli_die("replay: %s: pid %" PRIu32 " made no heap calls (--pid chooses another)", a->path,
                pid);
    return pid;
}

/* --script FILE: the calls as a script, not replayed. */
static void write_script(struct cli_ana *a, struct cli_replay_plan *plan, const char *script)
{
    int fd = cli_output_create("replay", script, NULL);
    int rc = cli_replay_stream(a->r, plan, fd);

    if (close(fd) && !rc)
        rc = -errno;
    if (rc == -EPROTO)
        cli_ana_fail(a, rc);
    if (rc)
        cli_die("replay: %s: %s", script, strerror(-rc));
}

/* Each allocator's run, --repeat times: the first run's results and the
 * median time per call. A fresh array. */
static struct result *measure(struct cli_ana *a, const struct opts *o, struct cli_replay_plan *plan)
{
    struct result *res = calloc(o->nr_alloc, sizeof(*res));
    double *times = calloc(o->repeat, sizeof(*times));

    if (!res || !times)
        cli_die("replay: out of memory");
    for (unsigned i = 0; i < o->nr_alloc; i++) {
        for (unsigned k = 0; k < o->repeat; k++) {
            struct cli_replay_run run;

            cli_replay_plan_free(plan);
            cli_replay_run(a->path, a->r, plan, o->alloc[i].preload, o->alloc[i].name, &run);
            check_library(&o->alloc[i], &run);
            times[k] = per_call(&run);
            if (k == 0)
                res[i].run = run;
            else
                cli_replay_run_free(&run);
        }
        qsort(times, o->repeat, sizeof(*times), by_time);
        res[i].ns_per_call = o->repeat % 2 ? times[o->repeat / 2]
                                           : (times[o->repeat / 2 - 1] + times[o->repeat / 2]) / 2;
    }
    free(times);
    return res;
}

int cmd_replay(int argc, char **argv)
{
    static const struct option own[] = {
        {"allocator", required_argument, NULL, OPT_ALLOCATOR},
        {"pid", required_argument, NULL, CLI_ANA_OPT_PID},
        {"repeat", required_argument, NULL, OPT_REPEAT},
        {"touch", required_argument, NULL, OPT_TOUCH},
        {"touch-limit", required_argument, NULL, OPT_TOUCH_LIMIT},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"svg", required_argument, NULL, OPT_SVG},
        {"script", required_argument, NULL, OPT_SCRIPT},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_FORMAT, .own = own, .usage = usage};
    struct opts o = {.pid = -1, .repeat = 3};
    struct cli_replay_plan plan = {.nr_want_samples = 200};
    struct cli_ana a;
    struct result *res;
    uint32_t pid;
    int c, rc, failed;

    cli_ana_init(&a, "replay", 0);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_ALLOCATOR:
            parse_allocator(&o, optarg);
            break;
        case CLI_ANA_OPT_PID:
            o.pid = (long)cli_ana_number(&a, "--pid", optarg);
            break;
        case OPT_REPEAT:
            o.repeat = (unsigned)cli_ana_number(&a, "--repeat", optarg);
            if (!o.repeat || o.repeat > 1000)
                cli_usage_error("replay: --repeat takes 1 to 1000");
            break;
        case OPT_TOUCH:
            plan.touch = parse_touch(optarg);
            break;
        case OPT_TOUCH_LIMIT:
            if (util_size_parse(optarg, &plan.touch_limit) != 0)
                cli_usage_error("replay: --touch-limit takes a size such as 512M or 4G, not '%s'",
                                optarg);
            break;
        case OPT_SAMPLES:
            plan.nr_want_samples = (uint32_t)cli_ana_number(&a, "--samples", optarg);
            if (!plan.nr_want_samples || plan.nr_want_samples > 100000)
                cli_usage_error("replay: --samples takes 1 to 100000");
            break;
        case OPT_SVG:
            o.svg = optarg;
            break;
        case OPT_SCRIPT:
            o.script = optarg;
            break;
        }
    }
    if (!o.nr_alloc)
        add_allocator(&o, &known[0]);
    if (!plan.touch_limit)
        plan.touch_limit = mem_available() / 2;
    /* Its calls need no stack: none is decoded (a build's thousand
     * processes' stacks took 168 MB to replay one of them). */
    a.stacks_later = true;
    cli_ana_open(&a, argc, argv, optind);
    if (cli_replay_refuses(a.r))
        cli_die("replay: %s: %s", a.path, cli_replay_refuses(a.r));

    pid = take_calls(&a, &o, &plan);

    if (o.script) {
        write_script(&a, &plan, o.script);
        cli_replay_plan_free(&plan);
        return cli_ana_close(&a);
    }

    res = measure(&a, &o, &plan);
    if (o.svg)
        write_svg(o.svg, &o, &plan, res, pid);
    if (a.format == CLI_FMT_JSON) {
        write_json(&a, &o, &plan, res, pid, plan.touch);
    } else if (a.format == CLI_FMT_CSV) {
        struct ana_table *t = make_table(&o, &plan, res, NR_COLS, 0, NULL);

        cli_ana_table(&a, t, stdout, "", true);
        ana_table_destroy(t);
    } else {
        write_text(&a, &o, &plan, res, pid, plan.touch);
    }
    failed = any_failed(&o, res);
    if (failed)
        cli_warn("replay: %s: calls that succeeded in the trace failed in the replay (above)",
                 a.path);
    for (unsigned i = 0; i < o.nr_alloc; i++)
        cli_replay_run_free(&res[i].run);
    free(res);
    cli_replay_plan_free(&plan);
    rc = cli_ana_close(&a);
    return rc ? rc : failed ? 1 : 0;
}
