/* SPDX-License-Identifier: MIT */
/* The one option loop of the analysis subcommands: getopt_long over the
 * command's own options plus the shared ones it takes (--format, --top,
 * --pid, --thread, the symbol options, -o), with --help and unknown
 * options handled the same way in every command. */
#ifndef CLI_GETOPT_H
#define CLI_GETOPT_H

#include <getopt.h>
#include <stdio.h>

#include "cli/cli_ana.h"

/* The shared options a command takes (a bit set). */
enum {
    CLI_TAKES_FORMAT = 1u << 0,   /* --format text|json|csv */
    CLI_TAKES_TOP = 1u << 1,      /* --top N */
    CLI_TAKES_PID = 1u << 2,      /* --pid LIST */
    CLI_TAKES_THREAD = 1u << 3,   /* --thread LIST */
    CLI_TAKES_SYM = 1u << 4,      /* --debug-dir, --sysroot, --all-frames, --raw */
    CLI_TAKES_OUTPUT = 1u << 5,   /* -o, --output FILE (into a->output) */
    CLI_TAKES_FRAMES = 1u << 6,   /* --frames N: frames per printed stack */
    CLI_TAKES_SUPP = 1u << 7,     /* --suppress, --lsan-suppressions, --no-default-suppressions */
    CLI_TAKES_PROGRAMS = 1u << 8, /* --by-process: no per-program view (cli_ana_programs) */
    /* Not an option: the command's JSON starts with cli_ana_json_begin,
     * whose trace_notes say the trace's notes; with --format=json they are
     * not said on stderr too (notes_in_output). */
    CLI_JSON_NOTES = 1u << 9,
};
#define CLI_TAKES_ANALYSIS                                                                         \
    (CLI_TAKES_FORMAT | CLI_TAKES_TOP | CLI_TAKES_PID | CLI_TAKES_THREAD | CLI_TAKES_SYM)

typedef void cli_usage_fn(FILE *out);

/* One command's option parse: what it takes besides its own options. */
struct cli_getopt {
    unsigned takes;           /* CLI_TAKES_* */
    const struct option *own; /* the command's own, {0}-terminated; may be NULL */
    cli_usage_fn *usage;      /* its --help text */
    struct option *all;       /* own and shared, built on the first call */
};

/* The next of the command's own options (its val, the value in optarg),
 * or -1 when the options end (optind is then the first operand: options
 * may come before or after the operands, getopt moves them). Shared
 * options are stored in a; --help prints usage on stdout and exits 0; an
 * unknown option, or one without its value, is a usage error naming it. */
int cli_getopt(struct cli_getopt *g, struct cli_ana *a, int argc, char **argv);

#endif
