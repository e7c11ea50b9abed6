/* SPDX-License-Identifier: MIT */
/* Suppressions: leaks that are the runtime's one-time allocations (libstdc++'s
 * 72,704-byte emergency exception pool in every C++ program) are listed apart
 * from the program's own. A rule is a line `leak:PATTERN`, a glob
 * (fnmatch(3)) over the whole stack as text prints it, leaf first with
 * " < " between frames (docs/symbols.md); `#` starts a comment. A default
 * list applies unless --no-default-suppressions; --suppress FILE adds
 * rules. docs/leaks.md. */
#ifndef CLI_SUPP_H
#define CLI_SUPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cli_ana;

#define CLI_SUPP_MAX_FILES 16

/* Rules of a command (cli_ana's, filled by --suppress and
 * --no-default-suppressions, CLI_TAKES_SUPP). */
struct cli_supp {
    bool no_defaults;
    const char *files[CLI_SUPP_MAX_FILES];
    unsigned nr_files;
    char **rules; /* loaded by cli_supp_load */
    size_t nr_rules;
};

/* Load the default rules (unless no_defaults) and every file's; dies with
 * "FILE:LINE: ..." on a bad file. */
void cli_supp_load(struct cli_supp *s, struct cli_ana *a);

/* The rule that matches stack (its text, every frame), or NULL. */
const char *cli_supp_match(const struct cli_supp *s, struct cli_ana *a, uint32_t stack);

void cli_supp_release(struct cli_supp *s);

#endif
