/* SPDX-License-Identifier: MIT */
/* The flame graph's tree: the core's call tree filled from the heap
 * model's call sites, with siblings in name order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_stacks.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"

static const char *const cost_names[ANA_FLAME_NR_COSTS] = {
    "allocations", "bytes", "leaked", "peak", "temporary",
};

const char *ana_flame_cost_name(enum ana_flame_cost c)
{
    return (unsigned)c < ANA_FLAME_NR_COSTS ? cost_names[c] : "unknown";
}

int ana_flame_cost_parse(const char *name, enum ana_flame_cost *out)
{
    for (unsigned i = 0; i < ANA_FLAME_NR_COSTS; i++) {
        if (!strcmp(name, cost_names[i])) {
            *out = (enum ana_flame_cost)i;
            return 0;
        }
    }
    return -EINVAL;
}

int ana_flame_cost_is_bytes(enum ana_flame_cost c)
{
    return c == ANA_FLAME_BYTES || c == ANA_FLAME_LEAKED || c == ANA_FLAME_PEAK;
}

/* A site's costs, metric index = enum ana_flame_cost. Returns 0 if it has
 * none. */
static int site_costs(const struct ana_site *s, int64_t cost[ANA_FLAME_NR_COSTS])
{
    int any = 0;

    if (!s)
        return 0; /* a stack id no event used */
    cost[ANA_FLAME_ALLOCATIONS] = (int64_t)s->nr_allocs;
    cost[ANA_FLAME_BYTES] = (int64_t)s->alloc_bytes;
    /* A site can end with fewer live bytes than it started with (it freed
     * blocks made before tracing): nothing leaked. */
    cost[ANA_FLAME_LEAKED] = s->live_bytes > 0 ? s->live_bytes : 0;
    cost[ANA_FLAME_PEAK] = (int64_t)s->peak_all_bytes;
    cost[ANA_FLAME_TEMPORARY] = (int64_t)s->nr_temporary;
    for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
        any |= cost[c] != 0;
    return any;
}

/* A folded row's costs, as its sites' added up (site_costs). */
static int row_costs(const struct ana_fold_row *r, int64_t cost[ANA_FLAME_NR_COSTS])
{
    int any = site_costs(&r->s, cost);

    cost[ANA_FLAME_LEAKED] = (int64_t)r->leaked_bytes;
    return any || r->leaked_bytes;
}

struct group {
    int64_t cost[ANA_FLAME_NR_COSTS];
    double share;   /* the largest share of a total any cost gives it */
    uint32_t first; /* its lowest stack id: ties, and a stable order */
};

static int by_share(const void *a, const void *b)
{
    const struct group *x = a, *y = b;

    if (x->share != y->share)
        return x->share < y->share ? 1 : -1;
    return (x->first > y->first) - (x->first < y->first);
}

/* Whether what is not kept still holds more than 1/LUMP_MAX of a total. */
#define LUMP_MAX 100

static int lump_too_big(const int64_t rest[ANA_FLAME_NR_COSTS],
                        const int64_t total[ANA_FLAME_NR_COSTS])
{
    for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
        if (rest[c] * LUMP_MAX > total[c])
            return 1;
    return 0;
}

/* Mark in kept the groups a picture draws: the max largest by share
 * (ties by first), and more while the rest would still hold over 1 % of
 * a total (a lump that big hides real call sites), up to 8 x max so no
 * picture becomes unreadable. Returns 0 or -ENOMEM. */
static int rank_groups(struct group *g, uint32_t nr_groups, const int64_t total[ANA_FLAME_NR_COSTS],
                       uint32_t max, uint8_t *kept)
{
    struct group *sorted = malloc((size_t)(nr_groups ? nr_groups : 1) * sizeof(*sorted));

    if (!sorted)
        return -ENOMEM;
    for (uint32_t i = 0; i < nr_groups; i++) {
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            if (total[c] > 0 && (double)g[i].cost[c] / (double)total[c] > g[i].share)
                g[i].share = (double)g[i].cost[c] / (double)total[c];
        sorted[i] = g[i];
        sorted[i].first = i; /* the group's index; its lowest stack ranked it */
    }
    qsort(sorted, nr_groups, sizeof(*sorted), by_share);
    int64_t rest[ANA_FLAME_NR_COSTS];
    memcpy(rest, total, sizeof(rest));
    for (uint32_t k = 0;
         k < nr_groups && (k < max || (lump_too_big(rest, total) && k < 8 * (uint64_t)max)); k++) {
        kept[sorted[k].first] = 1;
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            rest[c] -= g[sorted[k].first].cost[c];
    }
    free(sorted);
    return 0;
}

long ana_flame_top_sites(const struct ana_model *m, struct ana_stacks *st, uint32_t max,
                         uint8_t **keep)
{
    uint32_t n = ana_model_nr_sites(m), nr = 0;
    int64_t total[ANA_FLAME_NR_COSTS] = {0}, cost[ANA_FLAME_NR_COSTS];
    uint32_t *group_of = NULL;
    struct group *g = NULL;
    struct ana_map by_key;
    long rc = 0;

    *keep = calloc(n ? n : 1, 1);
    if (!*keep)
        return -ENOMEM;
    for (uint32_t id = 0; id < n; id++) {
        if (!site_costs(ana_model_site(m, id), cost))
            continue;
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            total[c] += cost[c];
        nr++;
    }
    if (!max || nr <= max) {
        for (uint32_t id = 0; id < n; id++)
            (*keep)[id] = (uint8_t)site_costs(ana_model_site(m, id), cost);
        return nr;
    }
    /* Group first, by what the picture shows (the chain of functions), then
     * rank the groups: a call site split over many raw stacks (unrolled
     * loops, inlined copies, template instances) counts as one. */
    ana_map_init(&by_key, sizeof(uint32_t));
    group_of = malloc((size_t)n * sizeof(*group_of));
    g = calloc(nr, sizeof(*g));
    uint32_t nr_groups = 0;
    if (!group_of || !g) {
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t id = 0; id < n; id++) {
        uint32_t key;
        int created;

        group_of[id] = UINT32_MAX;
        if (!site_costs(ana_model_site(m, id), cost))
            continue;
        if ((rc = ana_stacks_key(st, id, 0, &key)))
            goto out;
        uint32_t *gi = ana_map_put(&by_key, (uint64_t)key + 1, &created);
        if (!gi) {
            rc = -ENOMEM;
            goto out;
        }
        if (created) {
            *gi = nr_groups++;
            g[*gi].first = id;
        }
        group_of[id] = *gi;
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            g[*gi].cost[c] += cost[c];
    }
    uint8_t *kept = calloc(nr_groups ? nr_groups : 1, 1);
    if (!kept || (rc = rank_groups(g, nr_groups, total, max, kept)) < 0) {
        free(kept);
        rc = rc < 0 ? rc : -ENOMEM;
        goto out;
    }
    for (uint32_t id = 0; id < n; id++)
        if (group_of[id] != UINT32_MAX && kept[group_of[id]]) {
            (*keep)[id] = 1;
            rc++;
        }
    free(kept);
out:
    ana_map_release(&by_key);
    free(group_of);
    free(g);
    if (rc < 0) {
        free(*keep);
        *keep = NULL;
    }
    return rc;
}

int ana_flame_build(struct ana_tree *t, const struct ana_model *m, struct ana_stacks *st,
                    int inverted, const uint8_t *keep)
{
    return ana_flame_build_rooted(t, m, st, inverted, keep, NULL, 0);
}

/* The labels of one path (frames of stack, outermost first or inverted,
 * under root when not UINT32_MAX), grown in *labels. Returns how many, or
 * -errno. */
static int path_labels(struct ana_stacks *st, uint32_t stack, int inverted, uint32_t root,
                       uint32_t **labels, uint32_t *cap)
{
    const struct ana_frame *frames;
    /* Each site once: its frames need not be kept (a build's millions). */
    int n = ana_stacks_frames(st, stack, &frames), rc = 0;

    if (n < 0)
        return n;
    if ((uint32_t)n + 2 > *cap) {
        uint32_t *l = realloc(*labels, ((size_t)n + 2) * sizeof(*l));
        if (!l)
            return -ENOMEM;
        *labels = l;
        *cap = (uint32_t)n + 2;
    }
    uint32_t *lab = *labels;
    if (n == 0) {
        /* Events without a stack still count: under "(no stack)". */
        rc = ana_stacks_leaf(st, stack, &lab[0]);
        n = 1;
    } else {
        /* ana_stacks gives the leaf first. */
        for (int i = 0; i < n; i++)
            lab[i] = frames[inverted ? i : n - 1 - i].function;
    }
    /* The program as the outermost frame: the root's child, or the leaf's
     * last frame in an inverted graph. */
    if (!rc && root != UINT32_MAX) {
        if (inverted) {
            lab[n] = root;
        } else {
            memmove(lab + 1, lab, (size_t)n * sizeof(*lab));
            lab[0] = root;
        }
        n++;
    }
    return rc ? rc : n;
}

/* The lump of the sites not drawn, on the root. */
static int add_other(struct ana_tree *t, struct ana_stacks *st, uint32_t nr_other,
                     const int64_t other[ANA_FLAME_NR_COSTS])
{
    char name[64];
    uint32_t label;
    int rc;

    if (!nr_other)
        return 0;
    snprintf(name, sizeof(name), "(%u other call sites)", nr_other);
    if (!(rc = ana_stacks_intern(st, name, &label)))
        rc = ana_tree_add(t, &label, 1, other);
    return rc;
}

int ana_flame_build_rooted(struct ana_tree *t, const struct ana_model *m, struct ana_stacks *st,
                           int inverted, const uint8_t *keep, const uint32_t *root_of_image,
                           uint32_t nr_images)
{
    int64_t other[ANA_FLAME_NR_COSTS] = {0};
    uint32_t *labels = NULL, cap = 0, nr_other = 0;
    int rc = 0;

    for (uint32_t id = 0; id < ana_model_nr_sites(m) && !rc; id++) {
        int64_t cost[ANA_FLAME_NR_COSTS];

        if (!site_costs(ana_model_site(m, id), cost))
            continue;
        if (keep && !keep[id]) {
            for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
                other[c] += cost[c];
            nr_other++;
            continue;
        }
        uint32_t image = ana_model_site(m, id)->image;
        int n = path_labels(st, id, inverted,
                            root_of_image && image < nr_images ? root_of_image[image] : UINT32_MAX,
                            &labels, &cap);
        rc = n < 0 ? n : ana_tree_add(t, labels, (uint32_t)n, cost);
    }
    free(labels);
    return rc ? rc : add_other(t, st, nr_other, other);
}

int ana_flame_fold_kept(const struct ana_fold *f, uint32_t max, struct ana_map *kept_keys)
{
    uint32_t n, nr = 0;
    const struct ana_fold_row *all = ana_fold_rows(f, ANA_FOLD_BY_ALL, &n);
    int64_t total[ANA_FLAME_NR_COSTS] = {0}, cost[ANA_FLAME_NR_COSTS];
    struct group *g = calloc(n ? n : 1, sizeof(*g));
    uint8_t *kept = calloc(n ? n : 1, 1);
    int rc = g && kept ? 0 : -ENOMEM;

    for (uint32_t i = 0; i < n && !rc; i++) {
        if (!row_costs(&all[i], g[i].cost))
            continue;
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            total[c] += g[i].cost[c];
        nr += all[i].nr_sites;
    }
    if (!rc && max && nr > max)
        rc = rank_groups(g, n, total, max, kept);
    for (uint32_t i = 0; i < n && !rc; i++) {
        if ((max && nr > max && !kept[i]) || !row_costs(&all[i], cost))
            continue;
        if (!ana_map_put(kept_keys, (uint64_t)all[i].key + 1, NULL))
            rc = -ENOMEM;
    }
    free(g);
    free(kept);
    return rc;
}

int ana_flame_build_folded(struct ana_tree *t, const struct ana_fold *f, struct ana_stacks *st,
                           int inverted, uint32_t max, const uint32_t *root_of_program)
{
    int64_t other[ANA_FLAME_NR_COSTS] = {0};
    uint32_t *labels = NULL, cap = 0, nr_other = 0, n;
    const struct ana_fold_row *rows =
        ana_fold_rows(f, root_of_program ? ANA_FOLD_BY_PROGRAM : ANA_FOLD_BY_ALL, &n);
    struct ana_map kept;
    int rc;

    ana_map_init(&kept, 1);
    rc = ana_flame_fold_kept(f, max, &kept);
    for (uint32_t i = 0; i < n && !rc; i++) {
        int64_t cost[ANA_FLAME_NR_COSTS];

        if (!row_costs(&rows[i], cost))
            continue;
        if (!ana_map_get(&kept, (uint64_t)rows[i].key + 1)) {
            for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
                other[c] += cost[c];
            nr_other += rows[i].nr_sites;
            continue;
        }
        uint32_t root =
            root_of_program ? root_of_program[f->programs->of_image[rows[i].s.image]] : UINT32_MAX;
        int k = path_labels(st, rows[i].made_stack, inverted, root, &labels, &cap);
        rc = k < 0 ? k : ana_tree_add(t, labels, (uint32_t)k, cost);
    }
    free(labels);
    ana_map_release(&kept);
    return rc ? rc : add_other(t, st, nr_other, other);
}

struct name_ctx {
    const struct ana_tree *t;
    ana_flame_name_fn *name;
    void *arg;
};

static int by_name(const void *a, const void *b, void *arg)
{
    const struct name_ctx *c = arg;
    const char *x = c->name(c->arg, c->t->nodes[*(const uint32_t *)a].label);
    const char *y = c->name(c->arg, c->t->nodes[*(const uint32_t *)b].label);

    return strcmp(x, y);
}

int ana_flame_sort(struct ana_tree *t, ana_flame_name_fn *name, void *arg)
{
    struct name_ctx ctx = {t, name, arg};

    return ana_tree_sort_children(t, by_name, &ctx);
}
