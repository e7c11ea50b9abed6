/* SPDX-License-Identifier: MIT */
/* --pid / --exe / --thread selection of events and blocks. */
#include "analysis/core/ana_filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "memscribe/trace.h"

void ana_filter_init(struct ana_filter *f)
{
    memset(f, 0, sizeof(*f));
}

void ana_filter_release(struct ana_filter *f)
{
    free(f->pids);
    free(f->tids);
    for (size_t i = 0; i < f->nr_exes; i++)
        free(f->exes[i]);
    free(f->exes);
    free(f->image_on);
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

int ana_filter_add_exe(struct ana_filter *f, const char *glob)
{
    if (!*glob)
        return -EINVAL;
    char **v = realloc(f->exes, (f->nr_exes + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    f->exes = v;
    if (!(v[f->nr_exes] = strdup(glob)))
        return -ENOMEM;
    f->nr_exes++;
    return 0;
}

static bool exe_matches(const struct ana_filter *f, const struct fmt_image_info *ii)
{
    char path[4096];

    if (!ii || !ii->exe || ii->exe_len >= sizeof(path))
        return false;
    memcpy(path, ii->exe, ii->exe_len);
    path[ii->exe_len] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < f->nr_exes; i++)
        if (!fnmatch(f->exes[i], base, 0) || !fnmatch(f->exes[i], path, 0))
            return true;
    return false;
}

long ana_filter_resolve_exes(struct ana_filter *f, struct fmt_reader *r)
{
    uint32_t n = fmt_reader_nr_images(r);
    long hits = 0;

    if (!f->nr_exes)
        return n;
    free(f->image_on);
    f->nr_image_on = 0;
    if (!(f->image_on = calloc(n ? n : 1, sizeof(*f->image_on))))
        return -ENOMEM;
    f->nr_image_on = n;
    for (uint32_t i = 0; i < n; i++) {
        f->image_on[i] = exe_matches(f, fmt_reader_image(r, i));
        hits += f->image_on[i];
    }
    return hits;
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

bool ana_filter_image(const struct ana_filter *f, uint32_t image, uint32_t pid)
{
    if (!f)
        return true;
    if (f->nr_pids && !in(f->pids, f->nr_pids, pid))
        return false;
    return !f->nr_exes || (image < f->nr_image_on && f->image_on[image]);
}

bool ana_filter_thread(const struct ana_filter *f, uint32_t thread)
{
    if (!f || !f->nr_tids)
        return true;
    return thread < f->nr_thread_on && f->thread_on[thread];
}
