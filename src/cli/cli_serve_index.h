/* SPDX-License-Identifier: MIT */
/* The index memscribe serve answers a moment's leaks and a window from
 * (leaks and window --index: the chunk summaries, docs/serve.md "Scale"),
 * checked first: the page's first question, report, is asked with --verify
 * (every chunk's summary held against its events in the same pass), and
 * when it passes on a version of the file (its size and time, the same
 * before and after), later leaks and window queries on that version use
 * the index. Before, or on a trace that keeps growing, they replay it as
 * every other query does. */
#ifndef CLI_SERVE_INDEX_H
#define CLI_SERVE_INDEX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct cli_serve_index {
    pthread_mutex_t lock;
    uint64_t size, mtime_ns; /* the version that passed */
    bool verified;
};

/* The version of the trace at path: its size and modification time.
 * Returns 0 or -errno (stat). */
int cli_serve_trace_version(const char *path, uint64_t *size, uint64_t *mtime_ns);

void cli_serve_index_init(struct cli_serve_index *x);

/* The trace at path, of this version before and after a pass that checked
 * its index, passed. */
void cli_serve_index_passed(struct cli_serve_index *x, uint64_t size, uint64_t mtime_ns);

/* Has the trace at path, as it is now, passed? (x NULL: no.) */
bool cli_serve_index_ready(struct cli_serve_index *x, const char *path);

#endif
