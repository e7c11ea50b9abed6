/* SPDX-License-Identifier: MIT */
/* memscribe export: write a trace in formats other tools read (massif,
 * heaptrack, DHAT, pprof, folded stacks, SQLite, CSV), one or several in
 * one read of the trace; docs/export.md. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_segment.h"
#include "analysis/core/ana_time.h"
#include "analysis/export/ana_export_api.h"
#include "analysis/plan/ana_plan_fold.h"
#include "cli/cli.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"
#include "cli/cli_sym.h"
#include "memscribe/trace.h"

/* Outputs one command writes at most. */
#define MAX_OUTPUTS 16

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe export --to FORMAT [-o OUT] [--to FORMAT -o OUT]... [options] "
                 "FILE\n\n"
                 "Write the heap of trace FILE in a format another tool reads. Numbers are\n"
                 "memscribe's own: peak, leaked and temporary equal `memscribe report`'s.\n"
                 "Virtual-memory events are kept only by sqlite.\n\n"
                 "formats (what each keeps, and drops):\n");
    for (const struct ana_exporter *x = ana_exporters; x->name; x++) {
        const char *line = x->help, *nl;

        for (bool first = true; (nl = strchr(line, '\n')); line = nl + 1, first = false)
            fprintf(out, "  %-10s %.*s\n", first ? x->name : "", (int)(nl - line), line);
    }
    fprintf(out,
            "\noptions:\n"
            "  --to FORMAT       one of the formats above (required); repeat it, each\n"
            "                    with its -o, for several formats from one reading of\n"
            "                    the trace (two with massif, dhat or heaptrack)\n"
            "  -o, --output OUT  write to OUT (default: standard output, not for sqlite):\n"
            "                    the output of the --to before it (or, before any, of\n"
            "                    the next --to)\n"
            "  --cost C          folded: allocations, bytes, leaked, peak or temporary\n"
            "                    (default: bytes)\n"
            "  --snapshots N     massif: evenly spaced snapshots (default 50, 2..100000)\n"
            "  --threshold PCT   massif: fold tree nodes below PCT%% of a snapshot into\n"
            "                    'in K places' (default 1.0)\n"
            "  --detailed-freq N massif: every Nth snapshot is detailed, as valgrind's\n"
            "                    option (default 10, 1..100000; the peak and the last\n"
            "                    one always are)\n"
            "  --window FROM,TO  pprof: a delta of that window (times as `memscribe\n"
            "                    window` takes them: 1.5s, peak-1s, end-2s, end), as Go's\n"
            "                    ?seconds=N: alloc_* allocated inside it, inuse_* the\n"
            "                    change of the heap in use over it\n"
            "  --sample-index T  pprof: the default sample type (alloc_objects,\n"
            "                    alloc_space, inuse_objects, inuse_space; default\n"
            "                    inuse_space), as go tool pprof -sample_index\n"
            "  --exe GLOB        only processes whose executable (name or path) matches\n"
            "  --pid LIST        only these processes (comma-separated pids); by default\n"
            "                    every process of the trace counts, as one heap\n" CLI_SYM_USAGE
            "  -h, --help        show this help\n\n"
            "Exit status: 0 ok, 1 unreadable trace or failed output, 2 usage error.\n"
            "See docs/export.md.\n");
}

enum {
    OPT_TO = CLI_ANA_OPT_FIRST_OWN,
    OPT_COST,
    OPT_SNAPSHOTS,
    OPT_THRESHOLD,
    OPT_DETAILED_FREQ,
    OPT_WINDOW,
    OPT_SAMPLE_INDEX,
};

struct export_args {
    struct ana_export_options opt;
    struct cli_sym_opts sym;
    struct ana_filter filter;
    const char *in;
    struct ana_export_output outs[MAX_OUTPUTS];
    struct util_outfile made[MAX_OUTPUTS];
    unsigned nr_outs;
    const char *pending[MAX_OUTPUTS]; /* -o given before a --to without one */
    unsigned nr_pending, first_pending;
    bool have_cost;
    /* --window FROM,TO: resolved once the trace is open */
    struct ana_time_point win_from, win_to;
    /* The shared options' parser, and then the trace's reader and the
     * processes whose stacks go next (ana_letgo.h). */
    struct cli_ana ana;
};

/* "massif, heaptrack, ..." from the table. */
static const char *format_names(char *buf, size_t size)
{
    size_t n = 0;

    buf[0] = '\0';
    for (const struct ana_exporter *x = ana_exporters; x->name && n < size; x++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", x->name);
    return buf;
}

static bool exporting(const struct export_args *a, const char *format)
{
    for (unsigned i = 0; i < a->nr_outs; i++)
        if (!strcmp(a->outs[i].format->name, format))
            return true;
    return false;
}

/* A count option's value, from min to 100000. */
static uint32_t count_arg(const char *name, unsigned long min)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(optarg, &end, 10);

    if (errno || *end || end == optarg || optarg[0] == '-' || n < min || n > 100000)
        cli_usage_error("export: %s wants a number from %lu to 100000, not '%s'", name, min,
                        optarg);
    return (uint32_t)n;
}

/* --window FROM,TO: two points of the trace (ana_time.h). */
static void window_arg(struct export_args *a)
{
    const char *comma = strchr(optarg, ',');
    char from[64];

    if (!comma || (size_t)(comma - optarg) >= sizeof(from) ||
        (snprintf(from, sizeof(from), "%.*s", (int)(comma - optarg), optarg),
         ana_time_parse_point(from, &a->win_from)) ||
        ana_time_parse_point(comma + 1, &a->win_to))
        cli_usage_error("export: --window wants FROM,TO (times such as 1.5s, peak-1s, end-2s, "
                        "end), not '%s'",
                        optarg);
    a->opt.window = true;
}

static void parse_option(struct export_args *a, int c)
{
    char *end, names[256];

    switch (c) {
    case OPT_TO:
        if (a->nr_outs == MAX_OUTPUTS)
            cli_usage_error("export: at most %d outputs", MAX_OUTPUTS);
        if (!(a->outs[a->nr_outs].format = ana_exporter_find(optarg)))
            cli_usage_error("export: unknown format '%s' (%s); see 'memscribe export --help'",
                            optarg, format_names(names, sizeof(names)));
        if (a->first_pending < a->nr_pending)
            a->outs[a->nr_outs].path = a->pending[a->first_pending++];
        a->nr_outs++;
        break;
    case 'o':
        /* The output of the --to before it, or of the next --to. */
        if (a->nr_outs && !a->outs[a->nr_outs - 1].path) {
            a->outs[a->nr_outs - 1].path = optarg;
            break;
        }
        if (a->nr_pending == MAX_OUTPUTS)
            cli_usage_error("export: at most %d outputs", MAX_OUTPUTS);
        a->pending[a->nr_pending++] = optarg;
        break;
    case OPT_COST:
        if (ana_export_cost_parse(optarg, &a->opt.cost))
            cli_usage_error("export: unknown cost '%s' (allocations, bytes, leaked, peak, "
                            "temporary)",
                            optarg);
        a->have_cost = true;
        break;
    case OPT_SNAPSHOTS:
        a->opt.massif_snapshots = count_arg("--snapshots", 2);
        break;
    case OPT_DETAILED_FREQ:
        a->opt.massif_detailed_freq = count_arg("--detailed-freq", 1);
        break;
    case OPT_WINDOW:
        window_arg(a);
        break;
    case OPT_SAMPLE_INDEX:
        if (!ana_export_pprof_type_ok(optarg))
            cli_usage_error("export: --sample-index wants alloc_objects, alloc_space, "
                            "inuse_objects or inuse_space, not '%s'",
                            optarg);
        a->opt.pprof_default = optarg;
        break;
    case OPT_THRESHOLD:
        a->opt.massif_threshold = strtod(optarg, &end);
        if (*end || end == optarg || !(a->opt.massif_threshold >= 0) ||
            a->opt.massif_threshold > 100)
            cli_usage_error("export: --threshold wants a percentage from 0 to 100, not '%s'",
                            optarg);
        break;
    }
}

/* Each output's name: "-" is standard output; at most one goes there, and
 * a database never does. */
static void check_outputs(struct export_args *a)
{
    unsigned to_stdout = 0;

    if (a->first_pending < a->nr_pending)
        cli_usage_error("export: more -o than --to: each output names its format with --to");
    for (unsigned i = 0; i < a->nr_outs; i++) {
        struct ana_export_output *o = &a->outs[i];

        if (o->path && !strcmp(o->path, "-"))
            o->path = NULL;
        if (!o->path && o->format->compress == ANA_COMPRESS_DATABASE)
            cli_usage_error("export: --to %s needs -o DATABASE", o->format->name);
        to_stdout += !o->path;
        for (unsigned k = 0; k < i && o->path; k++)
            if (a->outs[k].path && !strcmp(a->outs[k].path, o->path))
                cli_usage_error("export: two outputs go to %s", o->path);
    }
    if (to_stdout > 1)
        cli_usage_error("export: %u outputs go to standard output: give each its -o FILE",
                        to_stdout);
}

static void parse_args(int argc, char **argv, struct export_args *a)
{
    static const struct option own[] = {
        {"to", required_argument, NULL, OPT_TO},
        {"output", required_argument, NULL, 'o'},
        {"cost", required_argument, NULL, OPT_COST},
        {"snapshots", required_argument, NULL, OPT_SNAPSHOTS},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"detailed-freq", required_argument, NULL, OPT_DETAILED_FREQ},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"sample-index", required_argument, NULL, OPT_SAMPLE_INDEX},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_PID | CLI_TAKES_SYM, .own = own, .usage = usage};
    struct cli_ana *ca = &a->ana;
    int c;

    a->opt.cost = ANA_COST_BYTES;
    a->opt.massif_threshold = -1;
    optind = 1;
    cli_ana_init(ca, "export", 0);
    while ((c = cli_getopt(&g, ca, argc, argv)) != -1)
        parse_option(a, c);
    /* The shared options' results move into the export's own. */
    a->sym = ca->sym;
    a->filter = ca->filter;
    ana_filter_init(&ca->filter);
    if (!ana_filter_is_empty(&a->filter))
        a->opt.filter = &a->filter;
    if (!a->nr_outs)
        cli_usage_error("export: say which format with --to FORMAT; see 'memscribe export --help'");
    if (optind + 1 != argc)
        cli_usage_error(optind == argc ? "export: which trace? give one FILE"
                                       : "export: give exactly one trace FILE");
    a->in = argv[optind];
    if (a->have_cost && !exporting(a, "folded"))
        cli_usage_error("export: --cost is for --to folded");
    if ((a->opt.massif_snapshots || a->opt.massif_threshold >= 0 || a->opt.massif_detailed_freq) &&
        !exporting(a, "massif"))
        cli_usage_error("export: --snapshots, --threshold and --detailed-freq are for --to massif");
    if ((a->opt.window || a->opt.pprof_default) &&
        (a->nr_outs != 1 || strcmp(a->outs[0].format->name, "pprof")))
        cli_usage_error("export: --window and --sample-index are for --to pprof alone");
    check_outputs(a);
}

/* Progress on a terminal: the export reads the trace once, or twice, each
 * pass from the start, so a time going back starts the next pass. */
struct progress {
    const char *path;
    uint64_t prev_ns;
    unsigned pass;
    bool shown;
};

static void progress(void *arg, uint64_t ts_ns, uint64_t last_ns)
{
    struct progress *p = arg;

    if (ts_ns < p->prev_ns)
        p->pass++;
    p->prev_ns = ts_ns;
    fprintf(stderr, "\rmemscribe: export: %s: pass %u: %3u%%", p->path, p->pass,
            (unsigned)(!last_ns || ts_ns >= last_ns ? 100 : ts_ns * 100 / last_ns));
    p->shown = true;
}

static void note(void *arg, const char *text)
{
    struct progress *p = arg;

    if (p->shown)
        fputs("\r\033[K", stderr); /* the note replaces the progress line */
    p->shown = false;
    cli_warn("export: %s: %s", p->path, text);
}

/* Whether the output writes each process at its end for the trace r reads
 * (NULL: for some trace; ana_export_streams), and MEMSCRIBE_FOLD=0 does
 * not keep every process to the end (tests compare the two: cli_fold.h). */
static bool streams(const struct export_args *a, const struct fmt_reader *r)
{
    if (a->opt.window)
        return false; /* the window's keys are the whole trace's (ana_window.h) */
    /* An aggregated trace's rows of a process can come after its end
     * (ana_plan_fold_trace). */
    return (r ? ana_plan_fold_trace(r) : ana_plan_fold_wanted()) &&
           ana_export_streams(r, a->outs, a->nr_outs);
}

/* The trace, with what the export must say of it first. Outputs that
 * write each process at its end have its stacks decoded as they are
 * needed and let go after (FMT_OPEN_STACKS_LATER), the others have every
 * stack decoded at once. */
static struct fmt_reader *open_trace(struct export_args *a)
{
    struct fmt_reader *r;
    char err[600], note_text[256];
    uint32_t i, n;
    int rc;

    if (fmt_reader_open_flags(&r, a->in, streams(a, NULL) ? FMT_OPEN_STACKS_LATER : 0, err,
                              sizeof(err)))
        cli_die("export: %s", err);
    a->ana.r = a->ana.letgo.r = r;
    if (streams(a, NULL) && !streams(a, r) && (rc = fmt_reader_load_stacks(r))) {
        if (rc == -EPROTO) /* its message names the file */
            cli_die("export: %s", fmt_reader_error(r));
        cli_die("export: %s: %s", a->in, strerror(-rc));
    }
    if (fmt_reader_sample_bytes(r))
        cli_warn("export: %s: %s", a->in,
                 ana_sample_note(note_text, sizeof(note_text), fmt_reader_sample_bytes(r)));
    if (exporting(a, "folded") && a->opt.cost == ANA_COST_TEMPORARY &&
        !ana_sample_has_temporary(fmt_reader_sample_bytes(r)))
        cli_die("export: %s: --cost temporary: " ANA_SAMPLE_NO_TEMPORARY_WHY, a->in);
    for (unsigned k = 0; fmt_reader_info(r)->aggregate_ns && k < a->nr_outs; k++)
        if (a->outs[k].format->no_aggregate)
            cli_die("export: %s: --to %s refuses an aggregated trace: %s", a->in,
                    a->outs[k].format->name, a->outs[k].format->no_aggregate);
    if (fmt_reader_info(r)->aggregate_ns) {
        char agg[ANA_AGGREGATE_NOTE_SIZE];
        cli_warn("export: %s: %s", a->in, ana_aggregate_note(agg, sizeof(agg), fmt_reader_info(r)));
    }
    if (fmt_reader_info(r)->keep_last_ns) {
        char seg[ANA_SEGMENT_NOTE_SIZE];
        cli_warn("export: %s: %s", a->in, ana_segment_note(seg, sizeof(seg), fmt_reader_info(r)));
    }
    if (fmt_reader_incomplete(r))
        cli_warn("export: %s: trace is incomplete (no valid end); exporting its %u whole chunks",
                 a->in, fmt_reader_nr_chunks(r));
    if (a->opt.window) {
        a->opt.window_t0_ns = cli_ana_time(&a->ana, "--window's FROM", &a->win_from);
        a->opt.window_t1_ns = cli_ana_time(&a->ana, "--window's TO", &a->win_to);
        if (a->opt.window_t1_ns < a->opt.window_t0_ns)
            cli_usage_error("export: --window: its TO comes before its FROM");
    }
    if (!a->opt.filter)
        return r;
    if (ana_filter_resolve_exes(a->opt.filter, r) < 0)
        cli_die("export: out of memory");
    for (i = 0, n = fmt_reader_nr_images(r);
         i < n && !ana_filter_image(a->opt.filter, i, fmt_reader_image(r, i)->pid); i++)
        ;
    if (i == n)
        cli_die("export: %s: no process of %s is in the trace", a->in,
                !a->opt.filter->nr_exes  ? "--pid"
                : a->opt.filter->nr_pids ? "--pid and --exe"
                                         : "--exe");
    return r;
}

/* Make each output file (a database's is made empty, then closed: SQLite
 * opens it by name, and would add to a database there; closing any
 * descriptor of it later would drop SQLite's locks). */
static void open_outputs(struct export_args *a)
{
    struct stat in_st, out_st;

    for (unsigned i = 0; i < a->nr_outs; i++) {
        struct ana_export_output *o = &a->outs[i];

        o->fd = STDOUT_FILENO;
        if (!o->path) {
            if (isatty(STDOUT_FILENO) && o->format->compress != ANA_COMPRESS_NONE)
                cli_usage_error("export: --to %s writes binary data: give -o FILE",
                                o->format->name);
            continue;
        }
        if (!stat(a->in, &in_st) && !stat(o->path, &out_st) && in_st.st_dev == out_st.st_dev &&
            in_st.st_ino == out_st.st_ino)
            cli_usage_error("export: the output %s is the input trace", o->path);
    }
    for (unsigned i = 0; i < a->nr_outs; i++) {
        struct ana_export_output *o = &a->outs[i];

        if (!o->path)
            continue;
        o->fd = cli_output_create("export", o->path, &a->made[i]);
        if (o->format->compress == ANA_COMPRESS_DATABASE) {
            close(o->fd);
            o->fd = STDOUT_FILENO;
        }
    }
}

/* Flush each file to its disk and close it. rc: the export's; returns it,
 * or the first failure here (*bad: which output). */
static int close_outputs(struct export_args *a, int rc, int *bad)
{
    for (unsigned i = 0; i < a->nr_outs; i++) {
        struct ana_export_output *o = &a->outs[i];

        if (o->fd == STDOUT_FILENO)
            continue;
        if (!rc && fsync(o->fd) && errno != EINVAL)
            rc = -errno, o->failed = 1, *bad = (int)i;
        if (close(o->fd) && !rc)
            rc = -errno, o->failed = 1, *bad = (int)i;
    }
    return rc;
}

/* A failed export: no output stays (a cut file could be read as a whole
 * one: heaptrack_print, for one, reads a cut file without a word; only a
 * file this command made goes, not a device, nor what a link leads to),
 * and the message names what failed. */
__attribute__((noreturn)) static void fail(struct export_args *a, struct fmt_reader *r, int rc)
{
    for (unsigned i = 0; i < a->nr_outs; i++)
        if (a->made[i].created)
            unlink(a->outs[i].path);
    for (unsigned i = 0; i < a->nr_outs; i++) {
        const struct ana_export_output *o = &a->outs[i];
        if (o->failed)
            cli_die("export: %s: writing failed: %s", o->path ? o->path : "standard output",
                    o->err[0] ? o->err : strerror(-rc));
    }
    if (rc == -EPROTO && fmt_reader_error(r)[0])
        cli_die("export: %s", fmt_reader_error(r));
    if (rc == -ESTALE) /* image_done let the process's stacks go */
        cli_die("export: %s (an event after its process's exit; MEMSCRIBE_FOLD=0 keeps every "
                "process's stacks)",
                fmt_reader_error(r));
    if (rc == -ENOMEM)
        cli_die("export: %s: out of memory", a->in);
    cli_die("export: %s: %s", a->in, fmt_reader_error(r)[0] ? fmt_reader_error(r) : strerror(-rc));
}

int cmd_export(int argc, char **argv)
{
    struct export_args a = {0};
    int bad = -1, rc;

    ana_filter_init(&a.filter);
    parse_args(argc, argv, &a);
    a.opt.sym = cli_sym_options(&a.sym);
    struct fmt_reader *r = open_trace(&a);
    struct progress prog = {.path = a.in, .pass = 1};
    a.opt.note = note;
    a.opt.note_arg = &prog;
    if (isatty(STDERR_FILENO)) {
        a.opt.progress = progress;
        a.opt.progress_arg = &prog;
    }
    if (streams(&a, r)) {
        /* A process written: its stacks go a second after its end. */
        a.opt.image_done = ana_letgo_fn;
        a.opt.image_arg = &a.ana.letgo;
    }
    open_outputs(&a);
    rc = ana_export_run(r, &a.opt, a.outs, a.nr_outs);
    if (prog.shown)
        fputs("\r\033[K", stderr); /* clear the progress line */
    if ((rc = close_outputs(&a, rc, &bad)))
        fail(&a, r, rc);
    cli_ana_fold_release(&a.ana);
    fmt_reader_close(r);
    ana_filter_release(&a.filter);
    return CLI_EXIT_OK;
}
