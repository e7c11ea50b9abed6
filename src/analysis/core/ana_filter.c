/* SPDX-License-Identifier: MIT */
/* --pid / --thread selection of events and blocks. */
#include "analysis/core/ana_filter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ana_filter_init(struct ana_filter *f)
{
    memset(f, 0, sizeof(*f));
}

void ana_filter_release(struct ana_filter *f)
{
    free(f->pids);
    free(f->tids);
    free(f->thread_on);
    ana_filter_init(f);
}

static int add_list(const char *list, uint32_t **ids, size_t *nr)
{
    const char *p = list;

    if (!*p)
        return -EINVAL;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        unsigned long v = strtoul(p, &end, 10);
        if (v > UINT32_MAX || (*end && *end != ','))
            return -EINVAL;
        uint32_t *n = realloc(*ids, (*nr + 1) * sizeof(**ids));
        if (!n)
            return -ENOMEM;
        *ids = n;
        n[(*nr)++] = (uint32_t)v;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return -EINVAL; /* trailing comma */
    }
    return 0;
}

int ana_filter_add_pids(struct ana_filter *f, const char *list)
{
    return add_list(list, &f->pids, &f->nr_pids);
}

int ana_filter_add_tids(struct ana_filter *f, const char *list)
{
    return add_list(list, &f->tids, &f->nr_tids);
}

static bool in(const uint32_t *ids, size_t nr, uint32_t id)
{
    for (size_t i = 0; i < nr; i++)
        if (ids[i] == id)
            return true;
    return false;
}

int ana_filter_note(struct ana_filter *f, const struct fmt_event *ev)
{
    if (!f || !f->nr_tids)
        return 0;
    if (ev->thread >= f->nr_thread_on) {
        size_t n = f->nr_thread_on ? f->nr_thread_on : 16;
        while (n <= ev->thread)
            n *= 2;
        bool *t = realloc(f->thread_on, n * sizeof(*t));
        if (!t)
            return -ENOMEM;
        memset(t + f->nr_thread_on, 0, (n - f->nr_thread_on) * sizeof(*t));
        f->thread_on = t;
        f->nr_thread_on = n;
    }
    if (ev->tid && in(f->tids, f->nr_tids, ev->tid))
        f->thread_on[ev->thread] = true;
    return 0;
}

bool ana_filter_pid(const struct ana_filter *f, uint32_t pid)
{
    return !f || !f->nr_pids || in(f->pids, f->nr_pids, pid);
}

bool ana_filter_thread(const struct ana_filter *f, uint32_t thread)
{
    if (!f || !f->nr_tids)
        return true;
    return thread < f->nr_thread_on && f->thread_on[thread];
}
