/* SPDX-License-Identifier: MIT */
/* memscribe top: a trace's heap and its top call sites in a terminal,
 * refreshed like top(1), as the trace grows (a recording in progress, over
 * ssh) or once on a finished one (docs/serve.md, "top"). Each frame is
 * made by a child process that reads the trace as it is then (whole
 * chunks: the reader reads an unfinished trace) and ends: what a frame
 * costs in memory goes with it, and a trace that cannot be read ends that
 * frame, with the reader's message. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/core/ana_time.h"
#include "analysis/model/ana_model.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_rows.h"
#include "util/util_duration.h"

enum { OPT_INTERVAL = CLI_ANA_OPT_FIRST_OWN, OPT_ONCE, OPT_FRAMES, OPT_SORT };
enum top_sort { SORT_LIVE, SORT_PEAK, SORT_ALLOCS, SORT_BYTES };

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe top [options] FILE\n\n"
                 "The heap of the trace FILE and its top call sites, refreshed like top(1):\n"
                 "heap in use by the running processes, the peak, allocations and their\n"
                 "rate, then one line per call site (processes merged): bytes in use now,\n"
                 "at the peak, allocations and bytes allocated, and where. Follows a trace\n"
                 "being recorded; Ctrl-C ends it. On a finished trace or without a terminal,\n"
                 "one frame.\n\n"
                 "options:\n"
                 "  --interval D    time between frames (default 1s)\n"
                 "  --once          one frame, then exit\n"
                 "  --frames N      this many frames, then exit\n"
                 "  --sort K        live (default), peak, allocations or bytes\n" CLI_ANA_USAGE);
}

struct top {
    struct cli_ana a;
    int argc, first; /* the command line, for each frame's cli_ana_open */
    char **argv;
    enum top_sort sort;
    bool clear; /* a terminal: each frame replaces the last */
    /* The frame before, for the rate: allocations and the trace's last time. */
    uint64_t prev_allocs, prev_last_ns;
    bool have_prev;
};

struct rank {
    const struct cli_rows *rows;
    enum top_sort sort;
};

static uint64_t key(const struct ana_site *s, enum top_sort sort)
{
    switch (sort) {
    case SORT_PEAK:
        return s->peak_all_bytes;
    case SORT_ALLOCS:
        return s->nr_allocs;
    case SORT_BYTES:
        return s->alloc_bytes;
    default:
        return s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;
    }
}

static int by_key(const void *x, const void *y, void *arg)
{
    const struct rank *r = arg;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    uint64_t a = key(r->rows->row[i], r->sort), b = key(r->rows->row[j], r->sort);

    return a != b ? (a > b ? -1 : 1) : (i > j) - (i < j);
}

static void print_sites(struct top *t, struct cli_rows *rows)
{
    uint32_t k = 0, *ids = malloc(((size_t)rows->nr + 1) * sizeof(*ids));
    struct rank r = {rows, t->sort};
    char b1[32], b2[32], b3[32];

    if (!ids)
        cli_die("top: out of memory");
    for (uint32_t id = 0; id < rows->nr; id++)
        if (rows->row[id])
            ids[k++] = id;
    qsort_r(ids, k, sizeof(*ids), by_key, &r);
    printf("%12s %12s %10s %12s  %s\n", "IN USE", "AT PEAK", "ALLOCS", "ALLOCATED", "CALL SITE");
    for (uint32_t i = 0; i < k && (!t->a.top || i < t->a.top); i++) {
        const struct ana_site *s = rows->row[ids[i]];
        unsigned nr = 0;
        const char *const *frames =
            cli_ana_stack(&t->a, cli_rows_stack(rows, ids[i]), false, 1, &nr);

        printf("%12s %12s %10" PRIu64 " %12s  %s\n",
               ana_bytes_format(s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0, b1, sizeof(b1)),
               ana_bytes_format(s->peak_all_bytes, b2, sizeof(b2)), s->nr_allocs,
               ana_bytes_format(s->alloc_bytes, b3, sizeof(b3)), nr ? frames[0] : "?");
    }
    free(ids);
}

/* The model of a frame and its rows, the processes merged: on a tree of
 * many processes each one's sites are folded into the rows at its end and
 * its stacks let go (cli_fold.h), as report's are. */
static struct ana_model *rows_of(struct top *t, struct cli_rows *rows)
{
    struct ana_model_options mo = {.filter = &t->a.filter};

    t->a.stacks_later = true;
    cli_ana_open(&t->a, t->argc, t->argv, t->first);
    cli_ana_programs(&t->a, &mo);
    t->a.fold_alone = true; /* its rows are by key alone */
    cli_fold_setup(&t->a, &mo, CLI_FOLD_ROWS);
    struct ana_model *m = cli_ana_model(&t->a, &mo, UINT64_MAX);
    cli_rows_answer(&t->a, m, CLI_ROWS_BY_ALL, rows);
    return m;
}

/* One frame, in a child: the trace read as it is now. Writes the frame's
 * allocations and last time on fd for the next frame's rate. */
static void frame(struct top *t, int fd)
{
    struct cli_rows rows;
    char b1[32], b2[32], b3[32], ts[32];
    time_t now = time(NULL);
    struct ana_model *m = rows_of(t, &rows);
    const struct ana_scope *all = ana_model_total(m);
    bool complete = !fmt_reader_incomplete(t->a.r);

    strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
    if (t->clear)
        fputs("\033[H\033[2J", stdout);
    printf("memscribe top: %s (%s)  %s\n", t->a.path, complete ? "complete" : "being written", ts);
    /* Exact bytes first, as every other output gives them; then for the eye. */
    printf("heap in use %" PRIu64 " B (%s) by running processes; live at the trace's end %" PRIu64
           " B (%s)\n",
           all->running_heap, ana_bytes_format(all->running_heap, b1, sizeof(b1)), all->heap,
           ana_bytes_format(all->heap, b2, sizeof(b2)));
    printf("peak %" PRIu64 " B (%s) at %s\n", all->peak,
           ana_bytes_format(all->peak, b3, sizeof(b3)),
           ana_time_format(all->peak_ns, ts, sizeof(ts)));
    double span = all->last_ns > all->first_ns ? (double)(all->last_ns - all->first_ns) / 1e9 : 0;
    double rate = span > 0 ? (double)all->nr_allocs / span : 0;
    const char *over = "since the start";
    if (t->have_prev && all->last_ns > t->prev_last_ns) {
        rate = (double)(all->nr_allocs - t->prev_allocs) * 1e9 /
               (double)(all->last_ns - t->prev_last_ns);
        over = "since the last frame";
    }
    printf("allocations %" PRIu64 " (%.0f/s %s), %s allocated, %" PRIu64 " temporary\n",
           all->nr_allocs, rate, over, ana_bytes_format(all->alloc_bytes, b1, sizeof(b1)),
           all->nr_temporary);
    printf("RSS %s now, %s at most\n\n",
           all->has_rss ? ana_bytes_format(all->rss, b1, sizeof(b1)) : "-",
           all->has_rss ? ana_bytes_format(all->rss_peak, b2, sizeof(b2)) : "-");
    print_sites(t, &rows);
    fflush(stdout);
    char note[64];
    int n = snprintf(note, sizeof(note), "%" PRIu64 " %" PRIu64 " %d\n", all->nr_allocs,
                     all->last_ns, complete);
    if (write(fd, note, (size_t)n) != n)
        cli_die("top: %s", strerror(errno));
    cli_rows_release(&rows);
    ana_model_destroy(m);
    exit(cli_ana_close(&t->a));
}

/* Run one frame: 0, 1 when the trace is complete, or the child's failure. */
static int run_frame(struct top *t)
{
    int fd[2], status;
    char note[64] = "";
    pid_t pid;

    if (pipe(fd))
        cli_die("top: %s", strerror(errno));
    fflush(stdout);
    if ((pid = fork()) < 0)
        cli_die("top: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        frame(t, fd[1]);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], note, sizeof(note) - 1);
    close(fd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got <= 0)
        return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
    int complete = 0;
    if (sscanf(note, "%" SCNu64 " %" SCNu64 " %d", &t->prev_allocs, &t->prev_last_ns, &complete) ==
        3)
        t->have_prev = true;
    return complete ? -1 : 0;
}

int cmd_top(int argc, char **argv)
{
    static const struct option own[] = {
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"once", no_argument, NULL, OPT_ONCE},
        {"frames", required_argument, NULL, OPT_FRAMES},
        {"sort", required_argument, NULL, OPT_SORT},
        {NULL, 0, NULL, 0},
    };
    static const char *const sorts[] = {"live", "peak", "allocations", "bytes", NULL};
    struct cli_getopt g = {.takes = CLI_TAKES_ANALYSIS, .own = own, .usage = usage};
    struct top t = {.argc = argc, .argv = argv};
    uint64_t interval = 1000000000ull;
    unsigned long frames = 0;
    bool once = false;
    int c, rc = 0;

    cli_ana_init(&t.a, "top", 20);
    while ((c = cli_getopt(&g, &t.a, argc, argv)) != -1) {
        switch (c) {
        case OPT_INTERVAL:
            if (util_duration_parse(optarg, &interval) || interval < 100000000ull)
                cli_usage_error("top: --interval wants a time of 100ms or more, not '%s'", optarg);
            break;
        case OPT_ONCE:
            once = true;
            break;
        case OPT_FRAMES:
            frames = cli_ana_number(&t.a, "--frames", optarg);
            break;
        case OPT_SORT:
            t.sort = (enum top_sort)cli_ana_choice(&t.a, "sort", optarg, sorts);
            break;
        }
    }
    t.first = optind;
    if (t.first + 1 != argc)
        cli_usage_error("top: one trace file, please (memscribe top --help)");
    t.clear = isatty(STDOUT_FILENO);
    if (!t.clear && !frames)
        once = true; /* a pipe or a file: one frame, not a stream of screens */
    for (unsigned long i = 0; !frames || i < frames; i++) {
        if (i) {
            struct timespec d = {(time_t)(interval / 1000000000ull),
                                 (long)(interval % 1000000000ull)};
            nanosleep(&d, NULL);
            if (!t.clear)
                printf("\n");
        }
        rc = run_frame(&t);
        if (rc > 0)
            return rc;
        /* A finished trace changes no more: its one frame says it all. */
        if (once || (rc < 0 && !frames))
            break;
    }
    return 0;
}
