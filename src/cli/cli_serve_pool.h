/* SPDX-License-Identifier: MIT */
/* The queries of memscribe serve, queued and run by a few workers
 * (docs/serve.md, "Scale"): the server's one polling thread never waits for
 * a query, a hundred tabs' queries wait their turn instead of being
 * refused, and no more queries run at once than the machine has cores for
 * (each is a memscribe command in a child). A query past the queue's depth
 * is answered at once that the server is busy. */
#ifndef CLI_SERVE_POOL_H
#define CLI_SERVE_POOL_H

#include <stdatomic.h>
#include <stdbool.h>

#define CLI_SERVE_QUEUE_DEPTH 256
#define CLI_SERVE_MAX_WORKERS 4

struct cli_serve_pool;

/* A job's work, in a worker; then its end, also in the worker (which may
 * hand the job back to its connection). Jobs still queued when the pool
 * stops get only their end, with ran false. */
typedef void cli_serve_job_fn(void *job);
typedef void cli_serve_job_end_fn(void *job, bool ran);

/* A pool of min(cores, CLI_SERVE_MAX_WORKERS) workers (at least 2): 0, or
 * -errno. */
int cli_serve_pool_start(struct cli_serve_pool **out, cli_serve_job_fn *run,
                         cli_serve_job_end_fn *end);
/* Queue job: 0, or -EBUSY with CLI_SERVE_QUEUE_DEPTH jobs waiting (or the
 * pool stopping). */
int cli_serve_pool_push(struct cli_serve_pool *p, void *job);
/* Jobs waiting now (for the busy answer). */
unsigned cli_serve_pool_waiting(struct cli_serve_pool *p);
/* Stop taking jobs, end those queued (ran false), wait for those running
 * (whose work the caller cuts short), free. */
void cli_serve_pool_stop(struct cli_serve_pool *p);

#endif
