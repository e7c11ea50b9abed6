/* SPDX-License-Identifier: MIT */
/* record --live (docs/serve.md, "Live"): `memscribe serve` on the trace
 * while it is recorded, started as a process of its own once the trace
 * exists, its address said on stderr; the trace flushed every
 * CLI_LIVE_FLUSH_NS (the session's flush_ns, set by record) so that the
 * page (which asks every second) is at most that much behind the program;
 * when the recording ends the server is told how the program ended, and
 * ends once a page following it took the final state (at most
 * CLI_LIVE_LINGER_MS: then it is stopped). */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include <stdint.h>
#include <sys/types.h>

#include "recorder/rec_session.h"

#define CLI_LIVE_FLUSH_NS (250 * 1000 * 1000ull)
#define CLI_LIVE_LINGER_MS 65000 /* serve's own bound, 60 s, and then some */
#define CLI_LIVE_MAX_LABELS 16

struct cli_live {
    const char *trace;    /* the trace the session writes, known at the first round */
    const char *listen;   /* serve --listen, NULL: its default */
    const char *port;     /* serve --port, NULL: its default */
    const char *url_file; /* serve --url-file, NULL: none */
    /* record --metrics: serve --token-file (NULL: a random token) and
     * --metrics-label; metrics: say /metrics's address, not the page's */
    const char *token_file;
    const char *labels[CLI_LIVE_MAX_LABELS];
    unsigned nr_labels;
    int metrics;
    int metrics_only; /* --metrics without --live: no page to wait for at the end */
    pid_t pid;        /* the server, 0 before it starts or after it failed */
    int started;      /* the first round started it (or failed to) */
};

/* The recording session's tap (its argument a struct cli_live). */
extern const struct rec_tap_ops cli_live_tap;

#endif
