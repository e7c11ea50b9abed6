/* SPDX-License-Identifier: MIT */
/* The query queue and its workers (cli_serve_pool.h). */
#include "cli/cli_serve_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct cli_serve_pool {
    pthread_mutex_t lock;
    pthread_cond_t more; /* a job queued, or the pool stopping */
    void *queue[CLI_SERVE_QUEUE_DEPTH];
    unsigned head, len; /* a ring of len jobs from head */
    atomic_int stopping;
    cli_serve_job_fn *run;
    cli_serve_job_end_fn *end;
    unsigned nr_workers;
    pthread_t workers[CLI_SERVE_MAX_WORKERS];
};

static void *worker(void *arg)
{
    struct cli_serve_pool *p = arg;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->len && !atomic_load(&p->stopping))
            pthread_cond_wait(&p->more, &p->lock);
        if (!p->len)
            break; /* stopping, nothing queued */
        void *job = p->queue[p->head];
        p->head = (p->head + 1) % CLI_SERVE_QUEUE_DEPTH;
        p->len--;
        bool stopping = atomic_load(&p->stopping);
        pthread_mutex_unlock(&p->lock);
        if (!stopping)
            p->run(job);
        p->end(job, !stopping);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int cli_serve_pool_start(struct cli_serve_pool **out, cli_serve_job_fn *run,
                         cli_serve_job_end_fn *end)
{
    struct cli_serve_pool *p = calloc(1, sizeof(*p));
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = 0;

    if (!p)
        return -ENOMEM;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    p->run = run;
    p->end = end;
    cores = cores < 2 ? 2 : cores > CLI_SERVE_MAX_WORKERS ? CLI_SERVE_MAX_WORKERS : cores;
    for (long i = 0; i < cores && !rc; i++)
        if (!(rc = -pthread_create(&p->workers[i], NULL, worker, p)))
            p->nr_workers++;
    if (rc && !p->nr_workers) {
        pthread_cond_destroy(&p->more);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return rc;
    }
    *out = p; /* fewer workers than asked still answer */
    return 0;
}

int cli_serve_pool_push(struct cli_serve_pool *p, void *job)
{
    int rc = 0;

    pthread_mutex_lock(&p->lock);
    if (p->len == CLI_SERVE_QUEUE_DEPTH || atomic_load(&p->stopping)) {
        rc = -EBUSY;
    } else {
        p->queue[(p->head + p->len) % CLI_SERVE_QUEUE_DEPTH] = job;
        p->len++;
        pthread_cond_signal(&p->more);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

unsigned cli_serve_pool_waiting(struct cli_serve_pool *p)
{
    pthread_mutex_lock(&p->lock);
    unsigned n = p->len;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void cli_serve_pool_stop(struct cli_serve_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stopping, 1);
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nr_workers; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
