/* SPDX-License-Identifier: MIT */
/* The checked index of memscribe serve (see cli_serve_index.h). */
#include "cli/cli_serve_index.h"

#include <errno.h>
#include <sys/stat.h>

int cli_serve_trace_version(const char *path, uint64_t *size, uint64_t *mtime_ns)
{
    struct stat st;

    if (stat(path, &st))
        return -errno;
    *size = (uint64_t)st.st_size;
    *mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

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
