/* SPDX-License-Identifier: MIT */
/* What the analysis subcommands (report, leaks, window, timeline,
 * histogram, tree) share: the options --format, --top, --pid, --thread and
 * the symbol options, opening the trace with its warnings, progress on a
 * terminal, stacks as lists of frames, and process headings. */
#ifndef CLI_ANA_H
#define CLI_ANA_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/core/ana_ended.h"
#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_json.h"
#include "analysis/core/ana_letgo.h"
#include "analysis/core/ana_map.h"
#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_stacks.h"
#include "analysis/core/ana_supp.h"
#include "analysis/core/ana_table.h"
#include "analysis/core/ana_time.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_tree.h"
#include "analysis/plan/ana_plan.h"
#include "cli/cli_sym.h"
#include "memscribe/trace.h"

enum cli_format { CLI_FMT_TEXT = 0, CLI_FMT_JSON, CLI_FMT_CSV };

#define CLI_SUPP_MAX_FILES 16

/* A command's suppressions (ana_supp.h): --suppress FILE,
 * --lsan-suppressions FILE and --no-default-suppressions (CLI_TAKES_SUPP),
 * the rules loaded by cli_ana_supp_load. */
struct cli_supp {
    bool no_defaults;
    const char *files[CLI_SUPP_MAX_FILES];
    unsigned nr_files;
    const char *lsan_files[CLI_SUPP_MAX_FILES];
    unsigned nr_lsan_files;
    struct ana_supp rules;
    bool loaded; /* cli_ana_supp_load ran: a second call does nothing */
};

/* Frames a stack column shows in text by default (--frames N changes it);
 * JSON and CSV have all. */
#define CLI_ANA_TEXT_FRAMES 6

/* getopt_long values: above the short options and cli_sym's. */
enum {
    CLI_ANA_OPT_FORMAT = 0x2000,
    CLI_ANA_OPT_TOP,
    CLI_ANA_OPT_PID,
    CLI_ANA_OPT_THREAD,
    CLI_ANA_OPT_FRAMES,
    CLI_ANA_OPT_SUPPRESS,
    CLI_ANA_OPT_NO_DEFAULT_SUPP,
    CLI_ANA_OPT_EXE,
    CLI_ANA_OPT_BY_PROCESS,
    CLI_ANA_OPT_LSAN_SUPP,
    CLI_ANA_OPT_FIRST_OWN, /* commands number their own options from here */
};

#define CLI_ANA_USAGE                                                                              \
    "  --format=F      text (default), json or csv\n"                                              \
    "  --pid LIST      only these processes (comma-separated pids)\n"                              \
    "  --exe GLOB      only processes whose executable (name or path) matches; repeatable\n"       \
    "  --thread LIST   only blocks allocated by these threads (tids)\n"                            \
    "  -h, --help      this text\n" CLI_SYM_USAGE

/* For commands that list leaks (CLI_TAKES_SUPP). */
#define CLI_ANA_SUPP_USAGE                                                                         \
    "  --suppress FILE rules 'leak:PATTERN' of leaks to list apart (repeatable)\n"                 \
    "  --lsan-suppressions FILE\n"                                                                 \
    "                  LeakSanitizer's suppressions file: 'leak:PATTERN', a substring\n"           \
    "                  of a frame's function, file or module (repeatable)\n"                       \
    "  --no-default-suppressions\n"                                                                \
    "                  list libstdc++'s emergency pool and the like with the rest\n"

/* For commands with the per-program view (CLI_TAKES_PROGRAMS). */
#define CLI_ANA_PROGRAMS_USAGE                                                                     \
    "  --by-process    one part per process; by default the processes of one\n"                    \
    "                  executable are merged into one program (a build's cc1s)\n"

/* For commands that print stacks (CLI_TAKES_FRAMES). */
#define CLI_ANA_FRAMES_USAGE                                                                       \
    "  --frames N      items per stack (0: all), the frame of interest (the first of\n"            \
    "                  the program's own) always among them; a run of library frames\n"            \
    "                  is one item '[N library frames]', the start-up chain (_start,\n"            \
    "                  start_thread) is left out, a cut stack ends in '... N more'\n"              \
    "                  (stacks read leaf first: A < B is A, called by B);\n"                       \
    "                  --all-frames shows every frame\n"

struct cli_ana {
    const char *cmd;
    enum cli_format format;
    unsigned top; /* 0: all rows */
    bool frames_set;
    unsigned frames; /* --frames N (0: all), if frames_set */
    struct ana_filter filter;
    struct cli_sym_opts sym;
    struct cli_supp supp; /* CLI_TAKES_SUPP */
    const char *path;
    const char *output; /* -o FILE (CLI_TAKES_OUTPUT), else NULL */
    struct fmt_reader *r;
    struct ana_stacks *stacks;
    bool progress; /* stderr is a terminal */
    bool progress_shown;
    bool have_peak; /* peak_ns is known (cli_ana_peak) */
    uint64_t peak_ns;
    char **list; /* frames of the latest cli_ana_stack() */
    unsigned nr_list;
    unsigned interest; /* the index in list of its frame of interest */
    uint8_t *cls;      /* cli_ana_classes()'s */
    size_t cap_cls;
    struct ana_map apart; /* stack + 1 -> how much more its row shows (cli_ana_apart) */
    bool by_process;      /* --by-process */
    /* The images grouped by executable (cli_ana_programs); by_program: the
     * per-program view is on (some executable ran in several selected
     * processes, and no --by-process). */
    struct ana_programs programs;
    bool by_program;
    /* Set by a command that reads no rows by program from a fold (report
     * and leaks with --by-process read rows by process, check and diff
     * rows by key alone): it may fold without the per-program view. */
    bool fold_alone;
    /* --index (leaks, window): the command's query prefers the index
     * (ana_plan.h), and its fold lets no left-out process go as it ends
     * (ana_plan_fold_leaves_out). */
    bool index;
    /* The rows of the per-program view and of the tree, folded at each
     * image's end (cli_fold.h); NULL: read from the whole model. */
    struct ana_fold *fold;
    /* The reader's stacks let go as processes end (ana_letgo.h): a fold's,
     * and the one-pass analyses' of a tree (window, vmem, frag, ...). */
    struct ana_letgo letgo;
    /* Set before cli_ana_open by a command that may fold: the trace is
     * opened with its stacks decoded as they are needed
     * (FMT_OPEN_STACKS_LATER); cli_fold_setup decodes them all when it
     * does not fold. */
    bool stacks_later;
    /* The command's output says what the trace is (report's notes, a JSON
     * document's trace_notes: cut short, dropped events, sampled, attached,
     * aggregated, --keep-last): cli_ana_open does not say it again on
     * stderr. Each note once. */
    bool notes_in_output;
};

void cli_ana_init(struct cli_ana *a, const char *cmd, unsigned default_top);

/* The index of arg among names (NULL-terminated): a keyword option's value.
 * Anything else is a usage error "<cmd>: --<opt> wants A, B or C, not
 * '<arg>'". */
unsigned cli_ana_choice(const struct cli_ana *a, const char *opt, const char *arg,
                        const char *const *names);

/* Handle c if it is a shared option (usage errors exit): true if it was. */
bool cli_ana_option(struct cli_ana *a, int c, const char *arg);

/* After getopt: exactly one FILE must remain. Opens it (dies with the
 * reader's message) and warns on stderr about an incomplete trace and
 * dropped events. */
void cli_ana_open(struct cli_ana *a, int argc, char **argv, int optind_now);

/* After cli_ana_open: group the selected images by executable into
 * a->programs and decide a->by_program; when on, mo->programs (if mo) is
 * set for the model. Dies on failure. */
void cli_ana_programs(struct cli_ana *a, struct ana_model_options *mo);

/* Program k (cli_ana_programs): its executable's path, escaped, in buf (or
 * "(unknown)"); its name, that path (its last part with short_name) and how
 * many processes ran it when more than one ("cc1 (36 processes)"); its
 * "exe" (null if unknown) and "processes" members in JSON. */
const char *cli_ana_program_exe(const struct cli_ana *a, uint32_t k, char *buf, size_t size);
void cli_ana_program_name(const struct cli_ana *a, uint32_t k, bool short_name, char *buf,
                          size_t size);
void cli_ana_program_json(const struct cli_ana *a, struct ana_json *j, uint32_t k);

/* The stack labeler, created on first use (dies on failure). */
struct ana_stacks *cli_ana_stacks(struct cli_ana *a);

/* Load a->supp's rules: the default ones (unless --no-default-suppressions)
 * and every file's; dies with "FILE:LINE: ..." on a bad file. A second
 * call does nothing. */
void cli_ana_supp_load(struct cli_ana *a);

/* Whether a->supp's rules match stack (ana_supp_match; dies on failure). */
bool cli_ana_suppressed(struct cli_ana *a, uint32_t stack);

/* A stack as strings, root first (top_down) or leaf first. In text, a row
 * as ana_interest_row lays it out (ana_interest.h): the entry chain left
 * out, runs of library frames one mark "[N library frames]", the frame of
 * interest always shown, at most max items (0: all; --frames N overrides
 * max), and "... N more" for the callers cut. In JSON and CSV, and with
 * --all-frames, every frame (JSON and CSV: at most max). a->interest is
 * the index of the frame of interest in the list. Valid until the next
 * call. Dies on failure. */
const char *const *cli_ana_stack(struct cli_ana *a, uint32_t stack, bool top_down, unsigned max,
                                 unsigned *nr);

/* Before a text table of the rows of stacks[0 .. n) (max items each, as
 * cli_ana_stack is asked): rows that would read alike but differ past the
 * items shown or inside a run folded after their frames of interest show
 * every item and unfold those runs (never anything before the frame of
 * interest, which stays where it was); later cli_ana_stack calls of these
 * stacks show that. Nothing in JSON, CSV, with --all-frames or with rows
 * of one item (labels). Dies on failure. */
void cli_ana_apart(struct cli_ana *a, const uint32_t *stacks, unsigned n, unsigned max);

/* The classes of n frames (ana_stacks_classes), valid until the next
 * call. Dies on failure. */
const uint8_t *cli_ana_classes(struct cli_ana *a, const struct ana_frame *f, unsigned n);

/* ana_progress_fn: "\r<cmd>: 42%" on a terminal. */
void cli_ana_progress(void *arg, uint64_t ts_ns, uint64_t last_ns);

/* Feed the trace's events up to until_ns (UINT64_MAX: all) to fn, with
 * progress on a terminal; dies with the reader's message on failure. */
void cli_ana_scan(struct cli_ana *a, uint64_t until_ns, ana_event_fn *fn, void *arg);
/* The scan options of that: up to until_ns, progress on a terminal. */
void cli_ana_scan_options(struct cli_ana *a, uint64_t until_ns, struct ana_scan_options *so);
/* One pass of the heap replay p (its consumers subscribed) over the
 * trace's events up to until_ns, with progress on a terminal; dies with
 * the reader's or a consumer's message on failure. */
struct ana_heap_replay;
void cli_ana_run(struct cli_ana *a, struct ana_heap_replay *p, uint64_t until_ns);
/* Clear the progress line if one was shown. */
void cli_ana_progress_done(struct cli_ana *a);

/* "pid 123 memtest_demo" for image i. */
void cli_ana_image_name(struct cli_ana *a, uint32_t image, char *buf, size_t size);
/* Write the image's identity as JSON members (pid, image, exe). */
void cli_ana_image_json(struct cli_ana *a, struct ana_json *j, uint32_t image);

/* What kind of trace the open one is, a note each, to fn(arg, note): sampled,
 * attached (record -p), aggregated, record --keep-last's run or segment. The
 * notes every command warns with at open, and report's note lines. */
typedef void cli_ana_note_fn(void *arg, const char *note);
void cli_ana_trace_notes(struct cli_ana *a, cli_ana_note_fn *fn, void *arg);
/* What cli_ana_open says of the trace unless the output says it
 * (notes_in_output): cut short, events dropped, then cli_ana_trace_notes'. */
void cli_ana_open_notes(struct cli_ana *a, cli_ana_note_fn *fn, void *arg);
/* Start a command's JSON document on stdout: the object, the trace's file,
 * what a sampled or an attached trace's numbers are (docs/json.md), and
 * "trace_notes", cli_ana_open_notes' notes: a command whose JSON starts so
 * takes CLI_JSON_NOTES (cli_getopt.h), and says them there only. */
void cli_ana_json_begin(struct cli_ana *a, struct ana_json *j);
/* The same on out (record --check writes its check on stderr). */
void cli_ana_json_begin_on(struct cli_ana *a, struct ana_json *j, FILE *out);

/* Write a table in the chosen format; csv_header for the first table of a
 * CSV stream. Dies on output failure. */
void cli_ana_table(struct cli_ana *a, const struct ana_table *t, FILE *out, const char *indent,
                   bool csv_header);

/* Die with "<cmd>: FILE: problem" for reader or analysis error rc. */
__attribute__((noreturn)) void cli_ana_fail(struct cli_ana *a, int rc);

/* Die (exit 1) if a's trace is sampled: what (an option) would show, draw
 * or rank by temporary allocations, which a sampled trace leaves out
 * (ana_sample.h). */
void cli_ana_want_temporary(struct cli_ana *a, const char *what);

/* One metric column of a call tree. */
struct cli_tree_metric {
    const char *title; /* text */
    const char *key;   /* JSON and CSV */
    bool none;         /* no value (a sampled trace's temporary, ana_sample.h): empty
                          cells in text and CSV, null in JSON */
};

/* Write tree t (labels are ana_stacks string ids) in the chosen format:
 * inclusive columns, then self columns if with_self, then the function,
 * indented by depth. At most a->top children per node (0: all); children
 * must already be sorted (ana_tree_sort). */
void cli_ana_tree(struct cli_ana *a, const struct ana_tree *t, const struct cli_tree_metric *mets,
                  unsigned nr_mets, bool with_self, FILE *out);

/* The labels of stack for a call tree after nr_before already in
 * (*labels), which grows (*cap entries): root first, or leaf first with
 * bottom_up, without the stack's entry chain (ana_interest.h: trees start at
 * main or the thread's function) unless --all-frames; "(no stack)" for an
 * empty stack; a stack cut at the recorder's
 * depth limit gets one "(stack cut at N frames)" on its root side. Returns
 * the number of labels in all. Dies on failure. */
uint32_t cli_ana_tree_path(struct cli_ana *a, uint32_t stack, bool bottom_up, uint32_t **labels,
                           size_t *cap, uint32_t nr_before);

/* Threads an analysis may run: the CPUs online, or MEMSCRIBE_JOBS=N;
 * 1 to 16. */
unsigned cli_ana_jobs(void);

/* The fewest events per range of a parallel replay: MEMSCRIBE_RANGE_EVENTS=N
 * (tests cut small traces so), else 0 (the replay's own). */
uint64_t cli_ana_range_events(void);

/* The finished heap model that answers q: the planner picks the route
 * (ana_plan.h: the chunks' totals or the index where q prefers them and
 * the trace allows, ranges on every CPU where the options allow, else one
 * pass), with q's threads (cli_ana_jobs), fewest events per range
 * (cli_ana_range_events) and progress filled in here. The refusal of the
 * route q asked for is said on stderr ("--index: WHY; replaying the
 * trace"); a fold's model (a->fold, mo->retire) is finished into it. Dies
 * on failure. */
struct ana_model *cli_ana_answer(struct cli_ana *a, struct ana_query *q);

/* cli_ana_answer of the query of every counter of mo's model up to
 * until_ns (UINT64_MAX: all), no index preferred. */
struct ana_model *cli_ana_model(struct cli_ana *a, const struct ana_model_options *mo,
                                uint64_t until_ns);

/* When heap in use of the selected processes peaked (ana_model's
 * peak_ns): a pass over the trace of its own, made once. */
uint64_t cli_ana_peak(struct cli_ana *a);

/* Point p, given as option opt ("--at"), as a time of the open trace; peak
 * costs a pass (cli_ana_peak). A point past the end or before the start is
 * moved to it, and a warning on stderr says so. */
uint64_t cli_ana_time(struct cli_ana *a, const char *opt, const struct ana_time_point *p);

/* Time t of option opt as a cut of an aggregated trace, where its blocks
 * are known (ana_aggregate_cut: the cut at or before t, or up, at or
 * after it; the trace's end at most): a warning on stderr says so when it
 * moves. t itself in an exact trace. */
uint64_t cli_ana_cut(struct cli_ana *a, const char *opt, uint64_t t, bool up);

/* Free a->fold and the queue of processes whose stacks go next (a
 * command that is done with its rows early: export). */
void cli_ana_fold_release(struct cli_ana *a);

/* Finish output (flush, check for write errors) and free everything. */
int cli_ana_close(struct cli_ana *a);

/* Parse a non-negative integer option value or exit 2. */
unsigned long cli_ana_number(struct cli_ana *a, const char *opt, const char *arg);

#endif
