/* SPDX-License-Identifier: MIT */
/* The programs' part of the writer's chunk totals (format 1.12, feature bit
 * TOTALS_PROGS; fmt_wtotals_internal.h, docs/format-blocks.md "TOTALS"):
 * the processes of one executable are a program, as the per-program view
 * groups them (ana_programs.h: the same executable path, byte for byte; a
 * process whose executable is unknown is its own). For a program two of
 * whose processes had events in a chunk, or one that exited, the chunk's
 * record holds what the all-processes part holds of all of them: its
 * running processes' heap change, its highest first reached, its RSS sum's
 * highest. Of the others a reader tells the program's highest from its one
 * process's own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_layout_internal.h"
#include "format/fmt_wtotals_internal.h"
#include "util/util_array.h"

/* FNV-1a over the executable's path. */
static uint64_t hash_of(const char *s, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* Place of hash h in by_hash: the program of exe there, or the empty
 * slot it would take. */
static uint32_t slot_of(const struct fmt_wtotals *t, uint64_t h, const char *exe, uint32_t len)
{
    uint32_t mask = t->hash_size - 1, i = (uint32_t)h & mask;

    for (;; i = (i + 1) & mask) {
        uint32_t id = t->by_hash[i];
        if (!id)
            return i;
        const struct fmt_wtprog *p = &t->progs[id - 1];
        if (p->hash == h && p->exe_len == len && !memcmp(p->exe, exe, len))
            return i;
    }
}

/* Room for one more program in by_hash, kept at most half full. */
static int grow_hash(struct fmt_wtotals *t)
{
    if (2 * ((size_t)t->nr_progs + 1) <= t->hash_size)
        return 0;
    uint32_t size = t->hash_size ? 2 * t->hash_size : 64;
    uint32_t *old = t->by_hash, old_size = t->hash_size;
    if (!(t->by_hash = calloc(size, sizeof(*t->by_hash)))) {
        t->by_hash = old;
        return -ENOMEM;
    }
    t->hash_size = size;
    for (uint32_t i = 0; i < old_size; i++)
        if (old[i]) {
            const struct fmt_wtprog *p = &t->progs[old[i] - 1];
            t->by_hash[slot_of(t, p->hash, p->exe, p->exe_len)] = old[i];
        }
    free(old);
    return 0;
}

/* The program of exe (its id + 1), made for image if new; 0 on -ENOMEM. */
static uint32_t program_of(struct fmt_wtotals *t, const char *exe, uint32_t len, uint32_t image)
{
    uint64_t h = hash_of(exe, len);

    if (grow_hash(t))
        return 0;
    uint32_t slot = slot_of(t, h, exe, len);
    if (t->by_hash[slot])
        return t->by_hash[slot];
    if (UTIL_ARRAY_RESERVE(t->progs, t->cap_progs, (size_t)t->nr_progs + 1, 16))
        return 0;
    struct fmt_wtprog *p = &t->progs[t->nr_progs];
    memset(p, 0, sizeof(*p));
    if (!(p->exe = malloc(len ? len : 1)))
        return 0;
    memcpy(p->exe, exe, len);
    p->hash = h;
    p->exe_len = len;
    p->first_image = image;
    t->by_hash[slot] = ++t->nr_progs;
    return t->nr_progs;
}

int fmt_wtgrp_attach(struct fmt_wtotals *t, struct fmt_wtimg *e)
{
    uint32_t id = t->at[e->image].group;

    if (!id || e->grp)
        return 0;
    struct fmt_wtprog *p = &t->progs[id - 1];
    if (p->gen != t->gen) {
        if (UTIL_ARRAY_RESERVE(t->gv, t->cap_gv, (size_t)t->nr_gv + 1, 8))
            return -ENOMEM;
        t->gv[t->nr_gv] = (struct fmt_wtgrp){
            .group = id - 1, .first_image = p->first_image, .part.peak = INT64_MIN};
        p->gen = t->gen;
        p->idx = t->nr_gv++;
    }
    e->grp = p->idx + 1;
    t->gv[p->idx].nr++;
    return 0;
}

int fmt_wtgrp_start(struct fmt_wtotals *t, struct fmt_wtimg *e, const char *exe, uint32_t exe_len)
{
    struct fmt_wtimg_at *a = &t->at[e->image];

    if (!exe || !exe_len || a->group)
        return 0; /* unknown: a program of its own; an image starts once */
    if (!(a->group = program_of(t, exe, exe_len, e->image)))
        return -ENOMEM;
    int rc = fmt_wtgrp_attach(t, e);
    if (rc || e->gone)
        return rc;
    /* An RSS sample or a block of it before its start (the recorder dates
     * none so, but a writer takes what comes): its program's running sum
     * has it from now on, and this chunk's part, which missed it, is not
     * written (a reader tells the program's highest there another way). */
    if (a->rss || a->heap || a->blocks || e->heap || e->blocks || e->has_rss) {
        t->progs[a->group - 1].rss += a->rss;
        t->gv[e->grp - 1].late = true;
    }
    return 0;
}

static int by_first_image(const void *x, const void *y)
{
    uint32_t a = ((const struct fmt_wtgrp *)x)->first_image;
    uint32_t b = ((const struct fmt_wtgrp *)y)->first_image;

    return (a > b) - (a < b);
}

/* Whether g's part is written: two of its images had events in the chunk,
 * or one exited; and none joined it late. */
static bool written(const struct fmt_wtgrp *g)
{
    return (g->nr > 1 || g->exits) && !g->late;
}

int fmt_wtgrp_put(struct fmt_wtotals *t, struct fmt_buf *b, uint64_t base_ns)
{
    uint32_t n = 0;

    /* in increasing order of their first images: a reader checks it */
    if (t->nr_gv)
        qsort(t->gv, t->nr_gv, sizeof(*t->gv), by_first_image);
    for (uint32_t i = 0; i < t->nr_gv; i++)
        n += written(&t->gv[i]);
    int rc = fmt_buf_reserve(b, (1 + 11 * (size_t)n) * FMT_VARINT_MAX);
    if (rc)
        return rc;
    fmt_buf_put_varint(b, n);
    for (uint32_t i = 0; i < t->nr_gv; i++) {
        const struct fmt_wtgrp *g = &t->gv[i];
        if (!written(g))
            continue;
        fmt_buf_put_varint(b, g->first_image);
        fmt_wtall_put(b, &g->part, base_ns);
        /* its running processes' RSS sum at the chunk's end: a reader
         * checks its own against it */
        fmt_buf_put_varint(b, t->progs[g->group].rss);
    }
    t->nr_gv = 0; /* progs[].gen forgets them by generation */
    return 0;
}

void fmt_wtgrp_destroy(struct fmt_wtotals *t)
{
    for (uint32_t i = 0; i < t->nr_progs; i++)
        free(t->progs[i].exe);
    free(t->progs);
    free(t->by_hash);
    free(t->gv);
}
