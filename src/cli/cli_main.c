/* SPDX-License-Identifier: MIT */
/* Entry point: one table drives both dispatch and help. */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "memscribe/trace.h"

static const struct cli_command commands[] = {
    {"record", cmd_record, "run a program and record every allocation it makes"},
    {"dump", cmd_dump, "print a trace's events, one line each, in time order"},
    {"report", cmd_report, "summary: peak, leaks, temporary allocations, top call sites"},
    {"leaks", cmd_leaks, "blocks still allocated at the end (or at a time), by stack"},
    {"window", cmd_window, "a time window as in WPA: transient and impacting allocations"},
    {"timeline", cmd_timeline, "heap in use, bytes allocated, live blocks and RSS over time"},
    {"vmem", cmd_vmem, "commit lifetimes of mapped ranges; reserved and committed over time"},
    {"frag", cmd_frag, "address-space fragmentation: holes, largest gap, misaligned ranges"},
    {"histogram", cmd_histogram, "allocations per power-of-two size class"},
    {"tree", cmd_tree, "call tree with inclusive and self cost, top-down or bottom-up"},
    {"source", cmd_source,
     "the source lines around a frame of the trace, as its owner may read them"},
    {"plot", cmd_plot, "SVG plots: heap use over time, log-log size histogram"},
    {"flamegraph", cmd_flamegraph, "interactive flame graph SVG (or folded stacks) by cost"},
    {"serve", cmd_serve,
     "a web view of a trace, live while it is recorded: charts, sites, windows"},
    {"top", cmd_top, "the heap and its top call sites in a terminal, refreshed like top(1)"},
    {"html", cmd_html, "one self-contained HTML report: summary, timeline, window, flame graph"},
    {"replay", cmd_replay, "run a process's heap calls again under other allocators, side by side"},
    {"diff", cmd_diff, "what changed between two traces (or windows), call site by call site"},
    {"check", cmd_check, "a memory gate for CI: leaks, peak, growth against a base; JUnit XML"},
    {"metrics", cmd_metrics,
     "the trace's numbers as Prometheus metrics, for a scraper or a Pushgateway"},
    {"export", cmd_export,
     "write a trace for massif, heaptrack, DHAT, pprof, flame graphs, SQLite, CSV"},
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void vmessage(const char *fmt, va_list ap)
{
    fflush(stdout);
    fputs("memscribe: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    exit(CLI_EXIT_FAIL);
}

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    exit(CLI_EXIT_USAGE);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

static void print_help(FILE *out)
{
    fprintf(out, "usage: memscribe <command> [options] [args]\n\n"
                 "memscribe records every heap and virtual-memory call a program makes,\n"
                 "with stack, thread and time, and answers questions about it.\n\n"
                 "commands:\n");
    /* Two spaces at least between a name and its summary, as help2man
     * (the man pages) reads a list of terms. */
    for (size_t i = 0; i < NR_COMMANDS; i++)
        fprintf(out, "  %-10s  %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'memscribe <command> --help' describes a command, 'man memscribe-<command>'\n"
                 "too where memscribe is installed; 'memscribe --version' names the trace\n"
                 "formats this build reads and writes.\n"
                 "Example: memscribe record -- ./my-program arg && memscribe dump "
                 "my-program.<pid>.mscr\n");
}

/* The trace formats too: which traces this build can read, and which
 * readers can read what it writes (docs/format.md, "Versions and
 * compatibility"). */
static void print_version(void)
{
    struct fmt_versions v;

    fmt_versions_get(&v);
    printf("memscribe %s\n"
           "trace format: reads %u.%u to %u.%u, writes %u.%u to %u.%u\n",
           MEMSCRIBE_VERSION, v.major, v.read_minor_min, v.major, v.read_minor_max, v.major,
           v.write_minor_min, v.major, v.write_minor_max);
}

int main(int argc, char **argv)
{
    /* Blocks from 256 KiB on are mapped on their own, and unmapped when
     * freed. glibc's default threshold rises to the size of each large
     * block freed, so a reader's chunk buffers and the arrays that grow by
     * doubling then come from the heap, where what they free stays
     * resident as holes: 4 MB of a build's report, 12 of sqlite's. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        print_version();
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NR_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    cli_usage_error("'%s' is not a command; see 'memscribe --help'", argv[1]);
}
