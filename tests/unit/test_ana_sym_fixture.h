/* SPDX-License-Identifier: MIT */
/* Shared by the symbolizer's unit tests: run tests/programs/sym_chain with
 * the capture library preloaded, and read back the module map and one
 * recorded stack per test case, as the collector would record them. */
#ifndef TEST_ANA_SYM_FIXTURE_H
#define TEST_ANA_SYM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

#define SYMFIX_MAX_MODULES 64
#define SYMFIX_MAX_STACKS 16
#define SYMFIX_MAX_FRAMES 64

struct symfix_stack {
    uint64_t size; /* the case: SYM_CASE_* */
    uint32_t nr;
    uint64_t addrs[SYMFIX_MAX_FRAMES];
};

struct symfix {
    char tmpdir[256]; /* removed by symfix_free */
    struct fmt_module modules[SYMFIX_MAX_MODULES];
    size_t nr_modules;
    struct symfix_stack stacks[SYMFIX_MAX_STACKS];
    size_t nr_stacks;
    uint64_t sym_alias;      /* runtime address of sym_alias() */
    uint64_t sym_asm_nosize; /* runtime address of sym_asm_nosize() */
};

/* Run sym_chain under the capture library and parse what it recorded.
 * Returns 0, or -1 with a message on stderr. */
int symfix_run(struct symfix *fx);
void symfix_free(struct symfix *fx);

/* The stack recorded for a case, or NULL. */
const struct symfix_stack *symfix_stack(const struct symfix *fx, uint64_t size);
/* The module whose path ends in /name, or NULL. */
const struct fmt_module *symfix_module(const struct symfix *fx, const char *name);

/* The line of tests/programs/<file> carrying "@sym:<marker>", or -1. */
int symfix_line(const char *file, const char *marker);

/* Path of a built test program or library (SYM_PROGRAMS_DIR/name). */
const char *symfix_program(const char *name);

/* Run a shell command; returns its exit status (0: success). */
int symfix_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
