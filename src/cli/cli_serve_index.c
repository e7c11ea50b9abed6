/* SPDX-License-Identifier: MIT */
/* The checked index of memscribe serve (see cli_serve_index.h). */
#include "cli/cli_serve_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli/cli_serve_query.h"

/* How long dump --verify may take: a pass over the whole trace. */
#define VERIFY_TIMEOUT_S 3600

/* Sleep a second, or until stopped: false when stopped. */
static bool nap(struct cli_serve_index *x)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_mutex_lock(&x->lock);
    while (!x->stop && pthread_cond_timedwait(&x->wake, &x->lock, &until) != ETIMEDOUT)
        ;
    bool go_on = !x->stop;
    pthread_mutex_unlock(&x->lock);
    return go_on;
}

/* Check the trace at (size, mtime): record it as passed when it did and
 * the file did not change meanwhile. */
static void verify(struct cli_serve_index *x, uint64_t size, uint64_t mtime)
{
    struct cli_serve_trace t = *x->trace;
    char *argv[] = {(char *)t.self, "dump", "--verify", (char *)t.path, NULL};
    char *err = NULL;
    uint64_t size2, mtime2;

    t.timeout_s = VERIFY_TIMEOUT_S;
    /* At a low priority: the page's own queries come first. */
    int rc = cli_serve_run(&t, argv, &x->stop, 10, NULL, NULL, &err);
    bool same =
        cli_serve_trace_version(t.path, &size2, &mtime2) == 0 && size2 == size && mtime2 == mtime;
    pthread_mutex_lock(&x->lock);
    if (rc >= 0 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0 && same) {
        x->size = size;
        x->mtime_ns = mtime;
        x->verified = true;
        x->failed[0] = 0;
    } else if (same) {
        snprintf(x->failed, sizeof(x->failed), "%s",
                 err && *err ? err
                 : rc < 0    ? strerror(-rc)
                             : "dump --verify failed");
    }
    pthread_mutex_unlock(&x->lock);
    free(err);
}

static void *watch(void *arg)
{
    struct cli_serve_index *x = arg;
    uint64_t tried_size = UINT64_MAX, tried_mtime = 0, prev_size = UINT64_MAX, prev_mtime = 0;

    for (;;) {
        uint64_t size, mtime;
        /* A version held for a second (a live recording's trace grows in
         * steps), not tried yet. */
        if (cli_serve_trace_version(x->trace->path, &size, &mtime) == 0 && size == prev_size &&
            mtime == prev_mtime && (size != tried_size || mtime != tried_mtime)) {
            tried_size = size;
            tried_mtime = mtime;
            verify(x, size, mtime);
        }
        prev_size = size;
        prev_mtime = mtime;
        if (!nap(x))
            return NULL;
    }
}

int cli_serve_index_start(struct cli_serve_index *x, const struct cli_serve_trace *t)
{
    memset(x, 0, sizeof(*x));
    x->trace = t;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->wake, NULL);
    int rc = pthread_create(&x->thread, NULL, watch, x);
    x->running = rc == 0;
    return -rc;
}

bool cli_serve_index_ready(struct cli_serve_index *x)
{
    uint64_t size, mtime;

    if (!x || cli_serve_trace_version(x->trace->path, &size, &mtime))
        return false;
    pthread_mutex_lock(&x->lock);
    bool ready = x->verified && x->size == size && x->mtime_ns == mtime;
    pthread_mutex_unlock(&x->lock);
    return ready;
}

void cli_serve_index_stop(struct cli_serve_index *x)
{
    if (!x->running)
        return;
    pthread_mutex_lock(&x->lock);
    x->stop = true;
    pthread_cond_signal(&x->wake);
    pthread_mutex_unlock(&x->lock);
    pthread_join(x->thread, NULL);
    x->running = false;
}
