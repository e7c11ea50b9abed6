/* SPDX-License-Identifier: MIT */
/* memscribe export: write a trace in a format other tools read (massif,
 * heaptrack, DHAT, pprof, folded stacks, SQLite, CSV); docs/export.md. */
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

#include "analysis/core/ana_sample.h"
#include "analysis/export/ana_export_api.h"
#include "cli/cli.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"
#include "cli/cli_sym.h"
#include "memscribe/trace.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: memscribe export --to FORMAT [options] FILE [-o OUT]\n\n"
            "Write the heap of trace FILE in a format another tool reads. Numbers are\n"
            "memscribe's own: peak, leaked and temporary equal `memscribe report`'s.\n"
            "Virtual-memory events are kept only by sqlite.\n\n"
            "formats (what each keeps, and drops):\n"
            "  massif     ms_print, massif-visualizer. Keeps heap in use over time\n"
            "             (--snapshots points), a detailed tree at the peak and at the\n"
            "             end. Drops threads, frees, block counts; '#' in names -> '_'.\n"
            "  heaptrack  heaptrack_print, heaptrack_gui (.zst: zstd, .gz: gzip, else\n"
            "             plain). Keeps every allocation and free with its stack and\n"
            "             size, time in ms, RSS. Drops threads, addresses, kinds.\n"
            "  dhat       valgrind's dh_view.html, Firefox Profiler. Keeps per stack\n"
            "             blocks, bytes, lifetimes, maximum, at peak and at end. Drops\n"
            "             the time series, threads; has no read/write counts.\n"
            "  pprof      go tool pprof and pprof-based services (gzipped\n"
            "             profile.proto). Keeps per stack alloc_objects, alloc_space,\n"
            "             inuse_objects, inuse_space (in use = live at the end).\n"
            "             Drops time, threads, the peak.\n"
            "  folded     flamegraph.pl, speedscope, inferno: 'root;...;leaf COST' per\n"
            "             stack, for one --cost. Drops everything else.\n"
            "  sqlite     a database (-o required): every heap block with its alloc\n"
            "             and free time and thread, frames as a tree, stacks, modules,\n"
            "             threads, processes, mappings with reserve/commit lifetimes.\n"
            "             Drops nothing memscribe analyses (see docs/export.md).\n"
            "  csv        one row per heap block: serial, pid, tid, kind, address,\n"
            "             size, alloc and free time, stack id, leaf function. Drops\n"
            "             whole stacks and virtual memory.\n\n"
            "options:\n"
            "  --to FORMAT       one of the formats above (required)\n"
            "  -o, --output OUT  write to OUT (default: standard output, not for sqlite)\n"
            "  --cost C          folded: allocations, bytes, leaked, peak or temporary\n"
            "                    (default: bytes)\n"
            "  --snapshots N     massif: evenly spaced snapshots (default 50, 2..100000)\n"
            "  --threshold PCT   massif: fold tree nodes below PCT%% of a snapshot into\n"
            "                    'in K places' (default 1.0)\n"
            "  --exe GLOB        only processes whose executable (name or path) matches\n"
            "  --pid LIST        only these processes (comma-separated pids); by default\n"
            "                    every process of the trace counts, as one heap\n" CLI_SYM_USAGE
            "  -h, --help        show this help\n\n"
            "Exit status: 0 ok, 1 unreadable trace or failed output, 2 usage error.\n"
            "See docs/export.md.\n");
}

enum { OPT_TO = CLI_ANA_OPT_FIRST_OWN, OPT_COST, OPT_SNAPSHOTS, OPT_THRESHOLD };

struct export_args {
    struct ana_export_options opt;
    struct cli_sym_opts sym;
    struct ana_filter filter;
    const char *in;
    const char *out;
    int have_format;
};

static void parse_args(int argc, char **argv, struct export_args *a)
{
    static const struct option own[] = {
        {"to", required_argument, NULL, OPT_TO},
        {"cost", required_argument, NULL, OPT_COST},
        {"snapshots", required_argument, NULL, OPT_SNAPSHOTS},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_PID | CLI_TAKES_SYM | CLI_TAKES_OUTPUT, .own = own, .usage = usage};
    struct cli_ana ca;
    int c, have_cost = 0;
    char *end;

    a->opt.cost = ANA_COST_BYTES;
    a->opt.massif_threshold = -1;
    optind = 1;
    cli_ana_init(&ca, "export", 0);
    while ((c = cli_getopt(&g, &ca, argc, argv)) != -1) {
        switch (c) {
        case OPT_TO:
            if (ana_export_format_parse(optarg, &a->opt.format))
                cli_usage_error("export: unknown format '%s' (massif, heaptrack, dhat, pprof, "
                                "folded, sqlite, csv); see 'memscribe export --help'",
                                optarg);
            a->have_format = 1;
            break;
        case OPT_COST:
            if (ana_export_cost_parse(optarg, &a->opt.cost))
                cli_usage_error("export: unknown cost '%s' (allocations, bytes, leaked, peak, "
                                "temporary)",
                                optarg);
            have_cost = 1;
            break;
        case OPT_SNAPSHOTS: {
            errno = 0;
            unsigned long n = strtoul(optarg, &end, 10);
            if (errno || *end || end == optarg || optarg[0] == '-' || n < 2 || n > 100000)
                cli_usage_error("export: --snapshots wants a number from 2 to 100000, not '%s'",
                                optarg);
            a->opt.massif_snapshots = (uint32_t)n;
            break;
        }
        case OPT_THRESHOLD:
            a->opt.massif_threshold = strtod(optarg, &end);
            if (*end || end == optarg || !(a->opt.massif_threshold >= 0) ||
                a->opt.massif_threshold > 100)
                cli_usage_error("export: --threshold wants a percentage from 0 to 100, not '%s'",
                                optarg);
            break;
        }
    }
    /* The shared options' results move into the export's own. */
    a->sym = ca.sym;
    a->out = ca.output;
    a->filter = ca.filter;
    ana_filter_init(&ca.filter);
    if (!ana_filter_is_empty(&a->filter))
        a->opt.filter = &a->filter;
    if (!a->have_format)
        cli_usage_error("export: say which format with --to FORMAT; see 'memscribe export --help'");
    if (optind + 1 != argc)
        cli_usage_error(optind == argc ? "export: which trace? give one FILE"
                                       : "export: give exactly one trace FILE");
    a->in = argv[optind];
    if (have_cost && a->opt.format != ANA_EXPORT_FOLDED)
        cli_usage_error("export: --cost is for --to folded");
    if ((a->opt.massif_snapshots || a->opt.massif_threshold >= 0) &&
        a->opt.format != ANA_EXPORT_MASSIF)
        cli_usage_error("export: --snapshots and --threshold are for --to massif");
    if (a->opt.format == ANA_EXPORT_SQLITE && (!a->out || !strcmp(a->out, "-")))
        cli_usage_error("export: --to sqlite needs -o DATABASE");
}

/* Progress on a terminal: the exporters read the trace in passes, each
 * from the start, so a time going back starts the next pass. */
struct progress {
    const char *path;
    uint64_t first_ns, last_ns, prev_ns;
    unsigned pass;
    bool shown;
};

static void progress(void *arg, uint64_t ts_ns)
{
    struct progress *p = arg;
    uint64_t span = p->last_ns > p->first_ns ? p->last_ns - p->first_ns : 1;
    uint64_t done = ts_ns > p->first_ns ? ts_ns - p->first_ns : 0;

    if (ts_ns < p->prev_ns)
        p->pass++;
    p->prev_ns = ts_ns;
    fprintf(stderr, "\rmemscribe: export: %s: pass %u: %3u%%", p->path, p->pass,
            (unsigned)(done >= span ? 100 : done * 100 / span));
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

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && !strcmp(s + n - k, suffix);
}

int cmd_export(int argc, char **argv)
{
    struct export_args a = {0};
    struct fmt_reader *r;
    char err[600];
    struct util_outfile made = {0};
    int fd = STDOUT_FILENO, output_failed, rc;
    const char *out_name;

    ana_filter_init(&a.filter);
    parse_args(argc, argv, &a);
    a.opt.sym = cli_sym_options(&a.sym);
    if ((rc = fmt_reader_open(&r, a.in, err, sizeof(err))))
        cli_die("export: %s", err);
    if (fmt_reader_sample_bytes(r)) {
        char note[256];

        cli_warn("export: %s: %s", a.in,
                 ana_sample_note(note, sizeof(note), fmt_reader_sample_bytes(r)));
    }
    if (a.opt.format == ANA_EXPORT_FOLDED && a.opt.cost == ANA_COST_TEMPORARY &&
        !ana_sample_has_temporary(fmt_reader_sample_bytes(r)))
        cli_die("export: %s: --cost temporary: " ANA_SAMPLE_NO_TEMPORARY_WHY, a.in);
    if (fmt_reader_incomplete(r))
        cli_warn("export: %s: trace is incomplete (no valid end); exporting its %u whole chunks",
                 a.in, fmt_reader_nr_chunks(r));
    if (a.opt.filter) {
        uint32_t i, n = fmt_reader_nr_images(r);
        if (ana_filter_resolve_exes(a.opt.filter, r) < 0)
            cli_die("export: out of memory");
        for (i = 0; i < n && !ana_filter_image(a.opt.filter, i, fmt_reader_image(r, i)->pid); i++)
            ;
        if (i == n)
            cli_die("export: %s: no process of %s is in the trace", a.in,
                    !a.opt.filter->nr_exes  ? "--pid"
                    : a.opt.filter->nr_pids ? "--pid and --exe"
                                            : "--exe");
    }
    struct progress prog = {.path = a.in, .pass = 1};
    a.opt.note = note;
    a.opt.note_arg = &prog;
    if (isatty(STDERR_FILENO)) {
        struct fmt_trace_counts c;
        fmt_reader_counts(r, &c);
        prog.first_ns = c.first_ts_ns;
        prog.last_ns = c.last_ts_ns;
        a.opt.progress = progress;
        a.opt.progress_arg = &prog;
    }
    out_name = a.out && strcmp(a.out, "-") ? a.out : "standard output";
    struct stat in_st, out_st;
    if (a.out && strcmp(a.out, "-") && !stat(a.in, &in_st) && !stat(a.out, &out_st) &&
        in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
        cli_usage_error("export: the output %s is the input trace", a.out);
    if (a.opt.format == ANA_EXPORT_HEAPTRACK && a.out)
        a.opt.compress = ends_with(a.out, ".zst")  ? ANA_COMPRESS_ZSTD
                         : ends_with(a.out, ".gz") ? ANA_COMPRESS_GZIP
                                                   : ANA_COMPRESS_NONE;
    if (a.out && strcmp(a.out, "-")) {
        fd = cli_output_create("export", a.out, &made);
        if (a.opt.format == ANA_EXPORT_SQLITE) {
            /* SQLite opens the file by its name, and would add to a
             * database there: it gets the empty one just made (closed
             * first, as closing any descriptor of it would drop SQLite's
             * locks). */
            close(fd);
            fd = STDOUT_FILENO;
        }
    } else if (isatty(STDOUT_FILENO) &&
               (a.opt.format == ANA_EXPORT_PPROF || a.opt.format == ANA_EXPORT_HEAPTRACK)) {
        cli_usage_error("export: --to %s writes binary data: give -o FILE",
                        ana_export_format_name(a.opt.format));
    }
    rc = ana_export_run(r, &a.opt, fd, a.out, &output_failed, err, sizeof(err));
    if (prog.shown)
        fputs("\r\033[K", stderr); /* clear the progress line */
    if (!rc && fd != STDOUT_FILENO && (fsync(fd) && errno != EINVAL))
        rc = -errno, output_failed = 1;
    if (fd != STDOUT_FILENO && close(fd) && !rc)
        rc = -errno, output_failed = 1;
    if (rc) {
        /* A partial output could be read as a whole one: heaptrack_print,
         * for one, reads a cut file without a word. Only a file this
         * command made goes (not a device, nor what a link leads to). */
        if (made.created)
            unlink(a.out);
        if (output_failed)
            cli_die("export: %s: writing failed: %s", out_name, err[0] ? err : strerror(-rc));
        if (rc == -EPROTO && !err[0] && fmt_reader_error(r)[0])
            cli_die("export: %s", fmt_reader_error(r));
        if (rc == -ENOMEM)
            cli_die("export: %s: out of memory", a.in);
        cli_die("export: %s: %s", a.in,
                err[0]                   ? err
                : fmt_reader_error(r)[0] ? fmt_reader_error(r)
                                         : strerror(-rc));
    }
    fmt_reader_close(r);
    ana_filter_release(&a.filter);
    return CLI_EXIT_OK;
}
