/* SPDX-License-Identifier: MIT */
/* The per-program view of a trace of several processes from its chunk
 * totals (ana_pmodel_internal.h; the totals route's peaks walk,
 * ana_pmodel_peaks.c). A program's peak is the highest sum of the heaps
 * of its running processes (ana_model_programs.c), its RSS peak the
 * highest sum of their latest samples; the totals hold each process's own
 * highest in a chunk, not the sums'.
 *
 * Where one running process of a program has events in a chunk (the
 * others stand still), the program's highest in the chunk is theirs plus
 * that one's: exact. Where several do, or the one exits in the chunk no
 * earlier than its highest there (events after an exit move its heap, not
 * the program's), the totals bound it only: the sum of each one's highest above, the sums at the
 * chunk's ends below. The scan finds each program's highest exact value
 * and lower bound; a chunk whose bound above reaches the lower bound may
 * hold the peak and is replayed, as is the chunk of the highest exact
 * value (the peak's shares come from a replay). The step then follows
 * each program's peak so far in order, from the exact chunks and the
 * replays; the last replay where a program's peak passed holds its
 * sites' shares. A chunk not replayed whose bound stays below the lower
 * bound holds no peak, though it may pass a peak so far: a later replay
 * passes that again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_pmodel_internal.h"
#include "util/util_array.h"

struct ana_pmodel_prog {
    /* its running processes' heap, live blocks and RSS at the start of
     * the chunk read, then at its end */
    int64_t run, run_blocks, rss;
    bool has_rss;
    /* scan: the highest exact value and its first chunk; lower bounds */
    int64_t best, lower, rss_lower;
    int64_t best_chunk; /* -1: none above 0 */
    /* step: its highest so far, first reached (the model's strict >, from 0) */
    uint64_t peak, peak_ns, peak_blocks, rss_peak, rss_peak_ns;
    int64_t peak_chunk, share_chunk; /* -1: none */
    /* the chunk read: its running processes with events there */
    uint32_t mark; /* the chunk + 1 once touched in it */
    uint32_t nr_active;
    bool exits;                  /* one exits in it after its highest: not exact */
    bool part;                   /* its part of the chunk's totals (1.12) says: exact */
    int64_t run0, blocks0, rss0; /* the sums at its start */
    int64_t up, rss_up;          /* how far above them it can go */
    bool has_high, has_rss_high; /* one's highest (exact with one active) */
    int64_t high, high_blocks, rss_high;
    uint64_t high_ns, rss_high_ns;
};

/* A chunk where the totals bound a program's highest (scan). */
struct ana_pmodel_doubt {
    uint32_t prog, chunk;
    int64_t heap, rss; /* its highest at most */
};

/* A site's bytes at its program's highest in a replay of chunk. */
struct ana_pmodel_share {
    uint32_t prog, stack, chunk;
    uint64_t bytes;
};

int ana_pmodel_progs_init(struct ana_pmodel_progs *p, const struct ana_programs *programs)
{
    memset(p, 0, sizeof(*p));
    if (!programs)
        return 0;
    p->programs = programs;
    p->v = calloc((size_t)programs->nr + 1, sizeof(*p->v));
    p->touched = calloc((size_t)programs->nr + 1, sizeof(*p->touched));
    if (!p->v || !p->touched)
        return -ENOMEM;
    for (uint32_t k = 0; k < programs->nr; k++)
        p->v[k].best_chunk = p->v[k].peak_chunk = p->v[k].share_chunk = -1;
    return 0;
}

void ana_pmodel_progs_release(struct ana_pmodel_progs *p)
{
    free(p->v);
    free(p->touched);
    free(p->doubts);
    free(p->shares);
}

static struct ana_pmodel_prog *prog_of(const struct ana_pmodel_progs *p, uint32_t image)
{
    const struct ana_programs *pr = p->programs;

    return pr && image < pr->nr_images ? &p->v[pr->of_image[image]] : NULL;
}

void ana_pmodel_progs_image(struct ana_pmodel_progs *p, uint32_t k,
                            const struct ana_pmodel_before *b, const struct fmt_image_totals *t)
{
    struct ana_pmodel_prog *g = prog_of(p, t->image);

    if (!g)
        return;
    g->has_rss |= t->has_rss; /* the model's: any sample, even after an exit */
    if (b->ended)
        return; /* not running: nothing of its program's moves */
    if (g->mark != k + 1) {
        g->mark = k + 1;
        g->nr_active = 0;
        g->exits = g->has_high = g->has_rss_high = g->part = false;
        g->run0 = g->run;
        g->blocks0 = g->run_blocks;
        g->rss0 = g->rss;
        g->up = g->rss_up = 0;
        p->touched[p->nr_touched++] = (uint32_t)(g - p->v);
    }
    g->nr_active++;
    /* Events after an exit move its heap, not the program's: its highest
     * in the chunk is of the program only if reached before the exit. */
    g->exits |= t->ended && ((t->has_peak && t->peak_ns >= t->end_ns) ||
                             (t->has_rss && t->rss_max_ns >= t->end_ns));
    if (t->has_peak) {
        g->up += t->peak > 0 ? t->peak : 0;
        g->has_high = true;
        g->high = g->run0 + t->peak;
        g->high_ns = t->peak_ns;
        g->high_blocks = g->blocks0 + t->peak_blocks;
    }
    if (t->has_rss) {
        int64_t d = (int64_t)t->rss_max - b->rss;
        g->rss_up += d > 0 ? d : 0;
        g->has_rss_high = true;
        g->rss_high = g->rss0 + d;
        g->rss_high_ns = t->rss_max_ns;
    }
    /* its part of the running sums at the chunk's end: none once it exits */
    if (t->ended) {
        g->run -= b->heap;
        g->run_blocks -= b->blocks;
        g->rss -= b->rss;
    } else {
        g->run += t->heap;
        g->run_blocks += t->blocks;
        g->rss += t->has_rss ? (int64_t)t->rss_last - b->rss : 0;
    }
}

/* Its highest in the chunk read is exact: one running process moved, or
 * its part of the totals says. */
static bool exact(const struct ana_pmodel_prog *g)
{
    return g->part || (g->nr_active == 1 && !g->exits);
}

int ana_pmodel_progs_part(struct ana_pmodel_progs *p, uint32_t k, const struct fmt_prog_totals *t)
{
    struct ana_pmodel_prog *g = prog_of(p, t->first_image);
    const struct fmt_all_totals *a = &t->part;

    if (!g || g->mark != k + 1)
        return 0; /* none of its processes running: nothing moved */
    /* Its running processes' change and RSS at the end, as their own parts
     * make them: else the writer grouped its processes otherwise (one
     * joined late: a sample before its start), and its highest is told as
     * if there were no part. */
    if (a->heap != g->run - g->run0 || a->blocks != g->run_blocks - g->blocks0 ||
        t->rss != (uint64_t)g->rss)
        return 0;
    g->part = true;
    g->has_high = a->has_peak;
    g->high = g->run0 + a->peak;
    g->high_ns = a->peak_ns;
    g->high_blocks = g->blocks0 + a->peak_blocks;
    g->has_rss_high = a->has_rss;
    g->rss_high = (int64_t)a->rss_max; /* a sum, not a change */
    g->rss_high_ns = a->rss_max_ns;
    return 0;
}

static void raise_to(int64_t *v, int64_t x)
{
    if (x > *v)
        *v = x;
}

int ana_pmodel_progs_scanned(struct ana_pmodel_progs *p, uint32_t k)
{
    for (uint32_t i = 0; i < p->nr_touched; i++) {
        struct ana_pmodel_prog *g = &p->v[p->touched[i]];
        /* the sums at the chunk's end were the sums at a moment */
        raise_to(&g->lower, g->run);
        raise_to(&g->rss_lower, g->rss);
        if (!exact(g)) {
            if (UTIL_ARRAY_RESERVE(p->doubts, p->cap_doubts, p->nr_doubts + 1, 64))
                return -ENOMEM;
            p->doubts[p->nr_doubts++] =
                (struct ana_pmodel_doubt){p->touched[i], k, g->run0 + g->up, g->rss0 + g->rss_up};
            continue;
        }
        if (g->has_high && g->high > 0 && g->high > g->best) {
            g->best = g->high;
            g->best_chunk = k;
        }
        if (g->has_high)
            raise_to(&g->lower, g->high);
        if (g->has_rss_high)
            raise_to(&g->rss_lower, g->rss_high);
    }
    p->nr_touched = 0;
    return 0;
}

void ana_pmodel_progs_mark(struct ana_pmodel_progs *p, bool shares, bool *replay)
{
    if (!p->programs)
        return;
    for (uint32_t k = 0; k < p->programs->nr; k++) {
        struct ana_pmodel_prog *g = &p->v[k];
        if (shares && g->best_chunk >= 0)
            replay[g->best_chunk] = true;
        g->run = g->run_blocks = g->rss = 0;
        g->mark = 0;
    }
    /* a bound that reaches the lower bound: the peak may be there (the
     * first reached, when equal) */
    for (size_t i = 0; i < p->nr_doubts; i++) {
        const struct ana_pmodel_doubt *d = &p->doubts[i];
        const struct ana_pmodel_prog *g = &p->v[d->prog];
        if ((d->heap > 0 && d->heap >= g->lower) || (d->rss > 0 && d->rss >= g->rss_lower))
            replay[d->chunk] = true;
    }
    free(p->doubts);
    p->doubts = NULL;
    p->nr_doubts = p->cap_doubts = 0;
}

void ana_pmodel_progs_stepped(struct ana_pmodel_progs *p, uint32_t k, bool replayed)
{
    for (uint32_t i = 0; i < p->nr_touched && !replayed; i++) {
        struct ana_pmodel_prog *g = &p->v[p->touched[i]];
        if (!exact(g))
            continue;
        if (g->has_high && g->high > 0 && (uint64_t)g->high > g->peak) {
            g->peak = (uint64_t)g->high;
            g->peak_ns = g->high_ns;
            g->peak_blocks = (uint64_t)g->high_blocks;
            g->peak_chunk = k;
        }
        if (g->has_rss_high && g->rss_high > 0 && (uint64_t)g->rss_high > g->rss_peak) {
            g->rss_peak = (uint64_t)g->rss_high;
            g->rss_peak_ns = g->rss_high_ns;
        }
    }
    p->nr_touched = 0;
}

/* A program's running sums and peaks so far into its scope s. */
static void put(const struct ana_pmodel_prog *g, struct ana_scope *s)
{
    s->running_heap = (uint64_t)g->run;
    s->running_blocks = (uint64_t)g->run_blocks;
    s->rss = (uint64_t)g->rss;
    s->peak = g->peak;
    s->peak_ns = g->peak_ns;
    s->peak_blocks = g->peak_blocks;
    s->rss_peak = g->rss_peak;
    s->rss_peak_ns = g->rss_peak_ns;
}

void ana_pmodel_progs_seed(const struct ana_pmodel_progs *p, struct ana_model *m)
{
    for (uint32_t k = 0; p->programs && k < m->nr_progs; k++)
        put(&p->v[k], &m->progs[k]);
}

int ana_pmodel_progs_take(struct ana_pmodel_progs *p, const struct ana_model *m, uint32_t k)
{
    if (!p->programs)
        return 0;
    for (uint32_t i = 0; i < m->nr_progs; i++) {
        struct ana_pmodel_prog *g = &p->v[i];
        const struct ana_scope *s = &m->progs[i];
        if (s->gen_) { /* its peak passed in the replay */
            g->peak = s->peak;
            g->peak_ns = s->peak_ns;
            g->peak_blocks = s->peak_blocks;
            g->peak_chunk = g->share_chunk = k;
        }
        g->rss_peak = s->rss_peak;
        g->rss_peak_ns = s->rss_peak_ns;
    }
    for (uint32_t id = 0; id < m->nr_used; id++) {
        const struct ana_site *s = ana_model_site(m, id);
        const struct ana_pmodel_prog *g = s ? prog_of(p, s->image) : NULL;
        uint64_t bytes = g ? ana_model_site_program_peak(m, id) : 0;
        if (!bytes || g->share_chunk != (int64_t)k)
            continue;
        if (UTIL_ARRAY_RESERVE(p->shares, p->cap_shares, p->nr_shares + 1, 256))
            return -ENOMEM;
        p->shares[p->nr_shares++] = (struct ana_pmodel_share){(uint32_t)(g - p->v), id, k, bytes};
    }
    return 0;
}

int ana_pmodel_progs_apply(struct ana_pmodel_progs *p, bool shares, struct ana_model *m)
{
    for (uint32_t k = 0; p->programs && k < m->nr_progs; k++) {
        const struct ana_pmodel_prog *g = &p->v[k];
        struct ana_scope *s = &m->progs[k];
        if (shares && g->peak_chunk != g->share_chunk)
            return -ENOTSUP;
        put(g, s);
        s->has_rss = g->has_rss;
    }
    return 0;
}

int ana_pmodel_progs_settle(struct ana_pmodel_progs *p, struct ana_pmodel_stack_share **out,
                            size_t *nr)
{
    size_t n = 0;

    *out = NULL;
    *nr = 0;
    for (size_t i = 0; i < p->nr_shares; i++)
        n += p->shares[i].chunk == (uint32_t)p->v[p->shares[i].prog].share_chunk;
    if (!n)
        return 0;
    if (!(*out = malloc(n * sizeof(**out))))
        return -ENOMEM;
    /* those of the replay where each program's peak last passed */
    for (size_t i = 0; i < p->nr_shares; i++) {
        const struct ana_pmodel_share *sh = &p->shares[i];
        if (sh->chunk == (uint32_t)p->v[sh->prog].share_chunk)
            (*out)[(*nr)++] = (struct ana_pmodel_stack_share){sh->stack, sh->bytes};
    }
    return 0;
}
