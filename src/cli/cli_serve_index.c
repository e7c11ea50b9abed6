/* SPDX-License-Identifier: MIT */
/* The checked index of memscribe serve (see cli_serve_index.h). */
#include "cli/cli_serve_index.h"

#include "cli/cli_serve_query.h"

void cli_serve_index_init(struct cli_serve_index *x)
{
    pthread_mutex_init(&x->lock, NULL);
    x->verified = false;
}

void cli_serve_index_passed(struct cli_serve_index *x, uint64_t size, uint64_t mtime_ns)
{
    pthread_mutex_lock(&x->lock);
    x->size = size;
    x->mtime_ns = mtime_ns;
    x->verified = true;
    pthread_mutex_unlock(&x->lock);
}

bool cli_serve_index_ready(struct cli_serve_index *x, const char *path)
{
    uint64_t size, mtime;

    if (!x || cli_serve_trace_version(path, &size, &mtime))
        return false;
    pthread_mutex_lock(&x->lock);
    bool ready = x->verified && x->size == size && x->mtime_ns == mtime;
    pthread_mutex_unlock(&x->lock);
    return ready;
}
