/* SPDX-License-Identifier: MIT */
/* Where a trace's unmatched frees came from: frees and reallocs of
 * addresses it never saw allocated (ana_model.h's nr_unmatched_frees).
 * The blocks were allocated where the trace could not see them, and what
 * the trace knows of a process image tells where: a child by fork frees
 * what its parent allocated before the fork (each subshell of a shell
 * script, such as a pyenv shim's, frees some of the shell's blocks); the
 * image record -p attached to frees what it allocated before the attach;
 * a Windows program frees what Wine's heap made before memscribe's hooks
 * went in; any other image, what was allocated before the collector's
 * hooks were in (before tracing began). One cause per image: every
 * unmatched free of it has that cause. docs/report.md. */
#ifndef ANA_UNMATCHED_H
#define ANA_UNMATCHED_H

#include <stdint.h>

#include "memscribe/trace.h"

enum ana_unmatched_cause {
    ANA_UNMATCHED_FORK = 0, /* inherited at fork */
    ANA_UNMATCHED_ATTACH,   /* allocated before record -p attached */
    ANA_UNMATCHED_WINE,     /* Wine's heap, before the hooks */
    ANA_UNMATCHED_BEFORE,   /* before tracing began */
    ANA_UNMATCHED_NR
};

/* The cause of image's unmatched frees in r's trace. */
enum ana_unmatched_cause ana_unmatched_cause_of(const struct fmt_reader *r, uint32_t image);

/* Its words for a person ("inherited at fork: ...") and its JSON key
 * ("inherited_at_fork"). */
const char *ana_unmatched_words(enum ana_unmatched_cause c);
const char *ana_unmatched_key(enum ana_unmatched_cause c);

#endif
