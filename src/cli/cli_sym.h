/* SPDX-License-Identifier: MIT */
/* Symbolized stacks for every subcommand that prints them: the shared
 * options (--debug-dir, --sysroot, --all-frames, --raw, --full-names,
 * --verbose, --symbol-path), a symbolizer fed with a trace's module map,
 * and stack printing (docs/symbols.md). */
#ifndef CLI_SYM_H
#define CLI_SYM_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

#define CLI_SYM_MAX_DEBUG_DIRS 16
/* --alloc-fn options, and as many names again from MEMSCRIBE_ALLOC_FNS */
#define CLI_SYM_MAX_ALLOC_FNS 64

/* getopt_long values of the shared options: above any short option. */
enum {
    CLI_SYM_OPT_DEBUG_DIR = 0x1000,
    CLI_SYM_OPT_SYSROOT,
    CLI_SYM_OPT_ALL_FRAMES,
    CLI_SYM_OPT_RAW,
    CLI_SYM_OPT_FULL_NAMES,
    CLI_SYM_OPT_VERBOSE,
    CLI_SYM_OPT_SYMBOL_PATH,
    CLI_SYM_OPT_ALLOC_FN,
};

/* Lines for a command's --help. */
#define CLI_SYM_USAGE                                                                              \
    "  --debug-dir DIR binaries or debug files of the traced program, by name\n"                   \
    "                  or in DIR/.build-id/xx/yyyy.debug (repeatable)\n"                           \
    "  --sysroot DIR   the recorded paths are under DIR (trace from elsewhere)\n"                  \
    "  --all-frames    show everything: every frame of every stack, memscribe's and\n"             \
    "                  the allocator's own on top, library runs and start-up too\n"                \
    "  --alloc-fn NAME the program's own allocation wrapper: rows name its caller\n"               \
    "                  (repeatable; also MEMSCRIBE_ALLOC_FNS=NAME,NAME...)\n"                      \
    "  --raw           module+offset only: read no binary or debug file\n"                         \
    "  --full-names    C++ and Rust names with their template and argument lists\n"                \
    "                  (default: elided, std::vector<>::push_back())\n"                            \
    "  --verbose       a note for every module: the files its names come from, and\n"              \
    "                  how they were found (a Wine prefix, --debug-dir, ...)\n"                    \
    "  --symbol-path P look for Windows PDBs in P too, before _NT_SYMBOL_PATH, P in\n"             \
    "                  its syntax (DIR;srv*DIR;...: folders and symbol stores, no server)\n"       \
    "  (MEMSCRIBE_SYMBOL_CACHE=FILE keeps the names read in FILE, and the next\n"                  \
    "  command reads them there, not from DWARF again; docs/symbols.md)\n"

/* The shared options: the symbolizer's own (struct ana_sym_options, the one
 * definition of what they mean), whose lists cli_sym_options points into
 * the room kept here; so.nr_alloc_fns counts --alloc-fn's names only. */
struct cli_sym_opts {
    struct ana_sym_options so;
    const char *debug_dirs[CLI_SYM_MAX_DEBUG_DIRS];
    const char *alloc_fns[CLI_SYM_MAX_ALLOC_FNS]; /* --alloc-fn */
};

/* Handle a getopt_long result if it is one of the shared options: returns
 * true if it was (usage errors exit), false to let the command handle c. */
bool cli_sym_option(const char *cmd, int c, const char *arg, struct cli_sym_opts *o);

/* The symbolizer's options the shared ones give, with the allocation
 * wrappers of --alloc-fn and of MEMSCRIBE_ALLOC_FNS (names separated by
 * commas: a C++ name holds colons and spaces). */
struct ana_sym_options cli_sym_options(const struct cli_sym_opts *o);

/* A symbolizer that knows every module of the trace. Dies on failure. */
struct ana_sym *cli_sym_open(const char *cmd, const struct cli_sym_opts *o,
                             const struct fmt_reader *r);

/* Print one stack (leaf first), one "<indent>[n] ..." line per frame. */
void cli_sym_print_stack(const char *cmd, FILE *out, struct ana_sym *s, uint32_t image,
                         const uint64_t *frames, uint32_t nr, const char *indent);

/* Print the symbolizer's notes (missing or changed files) as "# note: "
 * lines, so they stay with the output they explain. */
void cli_sym_print_notes(FILE *out, const struct ana_sym *s);

#endif
