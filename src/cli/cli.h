/* SPDX-License-Identifier: MIT */
/* What every subcommand shares: the command table, dying with a message,
 * exit codes (0 ok, 1 failure, 2 usage). Only cli/ prints or exits. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

typedef int cli_cmd_fn(int argc, char **argv);

struct cli_command {
    const char *name;
    cli_cmd_fn *fn;
    const char *summary;
};

/* Print "memscribe: <message>" to stderr and exit 1. */
__attribute__((noreturn, format(printf, 1, 2))) void cli_die(const char *fmt, ...);

/* Print "memscribe: <message>" to stderr and exit 2 (a usage error). The
 * message should say what is wrong and point at --help. */
__attribute__((noreturn, format(printf, 1, 2))) void cli_usage_error(const char *fmt, ...);

/* Print "memscribe: <message>" to stderr and go on. */
__attribute__((format(printf, 1, 2))) void cli_warn(const char *fmt, ...);

/* The subcommands; each lives in cmd_<name>.c. */
cli_cmd_fn cmd_record;
cli_cmd_fn cmd_dump;
cli_cmd_fn cmd_export;
cli_cmd_fn cmd_report;
cli_cmd_fn cmd_leaks;
cli_cmd_fn cmd_window;
cli_cmd_fn cmd_timeline;
cli_cmd_fn cmd_serve;
cli_cmd_fn cmd_top;
cli_cmd_fn cmd_vmem;
cli_cmd_fn cmd_frag;
cli_cmd_fn cmd_histogram;
cli_cmd_fn cmd_metrics;
cli_cmd_fn cmd_source;
cli_cmd_fn cmd_tree;
cli_cmd_fn cmd_plot;
cli_cmd_fn cmd_flamegraph;
cli_cmd_fn cmd_html;
cli_cmd_fn cmd_replay;
cli_cmd_fn cmd_diff;
cli_cmd_fn cmd_check;

/* memscribe check with its text or JSON on out (cmd_check: stdout).
 * parse_only: check the options and return 0, reading no trace (record
 * --check, before the program runs: a usage error exits 2 then).
 * Returns CLI_EXIT_OK when every check passes, CLI_EXIT_FAIL when one
 * fails; dies (exit 1) if a trace cannot be read. */
int cli_check_run(int argc, char **argv, FILE *out, bool parse_only);

/* One check decided, for another command's output (metrics --check):
 * check names it without its limit ("max-leaked", "max-growth-peak"),
 * measure is report's field it holds ("unsuppressed_leaked_bytes"), value
 * the run's and allowed the most it may be (known false: the trace cannot
 * tell; a growth check's value is the run's, its allowed the base's plus
 * the growth allowed). */
struct cli_check_outcome {
    const char *check, *measure;
    bool known, passed;
    uint64_t value, allowed;
};
typedef void cli_check_fn(void *arg, const struct cli_check_outcome *o);
/* cli_check_run with each check handed to fn, and nothing written.
 * Returns as cli_check_run. */
int cli_check_each(int argc, char **argv, cli_check_fn *fn, void *arg);

#endif
