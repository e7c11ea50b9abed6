/* SPDX-License-Identifier: MIT */
/* The queries `memscribe serve` answers (docs/serve.md): each one is one of
 * memscribe's own commands run on the served trace with --format=json, so
 * the page shows exactly what `memscribe report`, `window`, `leaks` and
 * `timeline` print. Parameters come from the URL and are checked here
 * against a strict pattern each (a number, a duration, a time): nothing the
 * browser sends becomes a path or an option of its own. */
#ifndef CLI_SERVE_QUERY_H
#define CLI_SERVE_QUERY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cli_serve_index;

/* A parameter's value by name, or NULL when the URL has none. */
typedef const char *cli_serve_param_fn(void *arg, const char *name);

/* An answer: body (malloc'd, body_len bytes) with an HTTP status and a
 * content type; gzip: the body is gzip data (a command's output,
 * cli_serve_gzip.h), else as it is sent (a message). */
struct cli_serve_answer {
    unsigned status;
    const char *type;
    char *body;
    size_t body_len;
    bool gzip;
};

/* How the recording of a live trace ended (record --live tells its server:
 * docs/serve.md, "The end"): the status query says it. */
struct cli_serve_end {
    atomic_int ended; /* 0: not ended, or not a live recording */
    atomic_int how;   /* the program's wait status, -1 when not seen */
};

#define CLI_SERVE_MAX_LABELS 16

struct cli_serve_trace {
    const char *path; /* the trace the server shows */
    const char *base; /* serve --base: the trace it is compared with (NULL: none); the server
                         reads these two files and no other */
    const char *self; /* this memscribe binary (/proc/self/exe at start) */
    unsigned timeout_s;
    uint64_t last_ns; /* its last event's time when the server started */
    bool totals;      /* complete, with chunk totals (format 1.10) when the server started: the
                         page asks report and leaks with index=1 first */
    uint32_t chunks;  /* its chunks then: the page's chart from the totals (timeline
                         --index, a row per chunk) when there are enough of them */
    struct cli_serve_index *index;   /* NULL: leaks and window always replay */
    const atomic_int *stop;          /* set: a running query is cut short (NULL: never) */
    const struct cli_serve_end *end; /* NULL: not followed */
    /* serve --metrics-label K=V: the metrics query's --label options */
    const char *metrics_labels[CLI_SERVE_MAX_LABELS];
    unsigned nr_metrics_labels;
    /* The queries' symbol cache (cli_serve_symbols): a file in memory that
     * each query's command gets as CLI_SERVE_SYMBOLS_FD, and the
     * environment naming it; NULL env: none, the queries read every
     * module's files each time. */
    int symbols_fd;
    char **env;
};

/* The descriptor a query's command finds its symbol cache at. */
#define CLI_SERVE_SYMBOLS_FD 3

/* Give t's queries one symbol cache (ana_sym_cache.c): the first scrape of
 * /metrics, or the page's first view, reads the modules' DWARF (libc's
 * debug file alone is 30 ms of zlib), the later ones its frames. A file
 * in memory (memfd), gone with the server; nothing on failure, said on
 * stderr. */
void cli_serve_symbols(struct cli_serve_trace *t);
/* ... and its end, once no query runs. */
void cli_serve_symbols_end(struct cli_serve_trace *t);

/* Answer query `name` (report, timeline, window, leaks, tree, status):
 * 0 with *ans filled (status 400 for a bad parameter, 404 for an unknown
 * query, 500 when the command failed: its message in the body), or
 * -errno when memory or the system failed. */
int cli_serve_query(const struct cli_serve_trace *t, const char *name, cli_serve_param_fn *param,
                    void *arg, struct cli_serve_answer *ans);

#endif
