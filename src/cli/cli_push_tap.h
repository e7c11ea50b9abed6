/* SPDX-License-Identifier: MIT */
/* record --push-metrics URL (docs/metrics.md, "Push"): `memscribe metrics
 * --push` of the trace, in a process of its own, every --push-every
 * period while the program runs (the recorder never waits for it; a push
 * still under way skips its turn) and once at the end, waited for, with
 * record --check's verdicts. */
#ifndef CLI_PUSH_TAP_H
#define CLI_PUSH_TAP_H

#include <stdint.h>
#include <sys/types.h>

#include "recorder/rec_session.h"

#define CLI_PUSH_MAX_LABELS 16

struct cli_push_tap {
    const char *url, *job; /* metrics --push, --job (NULL: its default) */
    uint64_t every_ns;     /* 0: at the end only */
    const char *labels[CLI_PUSH_MAX_LABELS];
    unsigned nr_labels;
    /* record --check's OPT[=VALUE]s: the last push carries their verdicts
     * (metrics --check) */
    const char *const *checks;
    unsigned nr_checks;
    /* private */
    pid_t pid;        /* a push under way, 0: none */
    uint64_t last_ns; /* when the last push started */
    int failed;       /* the final push failed (its words on stderr) */
};

/* The recording session's tap (its argument a struct cli_push_tap). */
extern const struct rec_tap_ops cli_push_tap;

#endif
