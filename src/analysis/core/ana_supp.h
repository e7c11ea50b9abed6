/* SPDX-License-Identifier: MIT */
/* Suppressions: leaks that are the runtime's one-time allocations (libstdc++'s
 * 72,704-byte emergency exception pool in every C++ program) are listed apart
 * from the program's own. A rule is a line `leak:PATTERN`, a glob
 * (fnmatch(3)) over the whole stack as text prints it, leaf first with
 * " < " between frames (docs/symbols.md); `#` starts a comment. A default
 * list applies unless the command is told otherwise; a file adds rules. A
 * file in LeakSanitizer's meaning has the same `leak:PATTERN` lines,
 * PATTERN matched as LSan matches it (a substring of a frame's function,
 * source file or module path; `*` any run, `^` and `$` anchors), so a
 * project's lsan.supp serves both tools. docs/leaks.md. */
#ifndef ANA_SUPP_H
#define ANA_SUPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_stacks.h"
#include "memscribe/trace.h"

struct ana_supp {
    char **rules; /* globs over the stack's text */
    size_t nr_rules;
    char **lsan_rules; /* LeakSanitizer's patterns */
    size_t nr_lsan_rules;
};

/* Add the default rules. Returns 0 or -ENOMEM. */
int ana_supp_add_defaults(struct ana_supp *s);

/* Add the rules of the file at path, LeakSanitizer's if lsan. Returns 0,
 * -ENOMEM, or -EINVAL with why in err ("PATH: cannot read the
 * suppressions: WHY", "PATH:LINE: a rule is 'leak:PATTERN' ..."). */
int ana_supp_load_file(struct ana_supp *s, const char *path, bool lsan, char *err, size_t err_size);

/* The rule that matches stack of r (its text as st makes it, every frame;
 * an LSan rule: any frame's function, file or module), or NULL; *rc is 0,
 * or -errno when the stack could not be read or symbolized (NULL then). */
const char *ana_supp_match(const struct ana_supp *s, struct fmt_reader *r, struct ana_stacks *st,
                           uint32_t stack, int *rc);

void ana_supp_release(struct ana_supp *s);

/* LeakSanitizer's match of one pattern against one name (its
 * TemplateMatch, sanitizer_common): pattern's pieces between `*` are
 * found in name in order; a leading `^` anchors the first at the start, a
 * trailing `$` the last at the end. An empty or NULL name never matches. */
bool ana_supp_lsan_match(const char *pattern, const char *name);

#endif
