/* SPDX-License-Identifier: MIT */
/* The index memscribe serve answers a moment's leaks and a window from
 * (leaks and window --index: the chunk summaries, docs/serve.md "Scale"),
 * checked first: a thread of
 * the server runs `memscribe dump --verify` on the trace once its size and
 * time have held for a second, and the index is used for exactly the
 * version of the file that passed. Until then, or for a trace that keeps
 * growing, they replay the trace as every other query does. */
#ifndef CLI_SERVE_INDEX_H
#define CLI_SERVE_INDEX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct cli_serve_trace;

struct cli_serve_index {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool running, stop;
    const struct cli_serve_trace *trace;
    uint64_t size, mtime_ns; /* the version that passed */
    bool verified;
    char failed[256]; /* dump --verify's message on the latest version tried */
};

/* Start checking t's trace (t must outlive the index). 0 or -errno. */
int cli_serve_index_start(struct cli_serve_index *x, const struct cli_serve_trace *t);

/* Has the trace, as it is now, passed? */
bool cli_serve_index_ready(struct cli_serve_index *x);

/* Stop the thread (a check under way is killed). */
void cli_serve_index_stop(struct cli_serve_index *x);

#endif
