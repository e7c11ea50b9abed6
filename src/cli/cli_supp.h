/* SPDX-License-Identifier: MIT */
/* Suppressions: leaks that are the runtime's one-time allocations (libstdc++'s
 * 72,704-byte emergency exception pool in every C++ program) are listed apart
 * from the program's own. A rule is a line `leak:PATTERN`, a glob
 * (fnmatch(3)) over the whole stack as text prints it, leaf first with
 * " < " between frames (docs/symbols.md); `#` starts a comment. A default
 * list applies unless --no-default-suppressions; --suppress FILE adds
 * rules. --lsan-suppressions FILE adds rules in LeakSanitizer's meaning:
 * the same `leak:PATTERN` lines, PATTERN matched as LSan matches it (a
 * substring of a frame's function, source file or module path; `*` any
 * run, `^` and `$` anchors), so a project's lsan.supp serves both tools.
 * docs/leaks.md. */
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
    const char *lsan_files[CLI_SUPP_MAX_FILES]; /* --lsan-suppressions */
    unsigned nr_lsan_files;
    char **rules; /* loaded by cli_supp_load */
    size_t nr_rules;
    char **lsan_rules; /* LeakSanitizer's patterns, loaded by cli_supp_load */
    size_t nr_lsan_rules;
    bool loaded; /* cli_supp_load ran: a second call does nothing */
};

/* Load the default rules (unless no_defaults) and every file's; dies with
 * "FILE:LINE: ..." on a bad file. */
void cli_supp_load(struct cli_supp *s, struct cli_ana *a);

/* The rule that matches stack (its text, every frame; an LSan rule: any
 * frame's function, file or module), or NULL. */
const char *cli_supp_match(const struct cli_supp *s, struct cli_ana *a, uint32_t stack);

void cli_supp_release(struct cli_supp *s);

/* LeakSanitizer's match of one pattern against one name (its
 * TemplateMatch, sanitizer_common): pattern's pieces between `*` are
 * found in name in order; a leading `^` anchors the first at the start, a
 * trailing `$` the last at the end. An empty or NULL name never matches. */
bool cli_supp_lsan_match(const char *pattern, const char *name);

#endif
