/* SPDX-License-Identifier: MIT */
/* The flame graph's tree: the core's call tree filled from the heap
 * model's call sites, with siblings in name order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_stacks.h"
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

const char *ana_flame_stacks_name(void *arg, uint32_t label)
{
    return ana_stacks_str(arg, label);
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

struct ranked {
    double share;
    uint32_t stack;
};

static int by_share(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->share != y->share)
        return x->share < y->share ? 1 : -1;
    return (x->stack > y->stack) - (x->stack < y->stack);
}

long ana_flame_top_sites(const struct ana_model *m, uint32_t max, uint8_t **keep)
{
    uint32_t n = ana_model_nr_sites(m), nr = 0;
    int64_t total[ANA_FLAME_NR_COSTS] = {0}, cost[ANA_FLAME_NR_COSTS];
    struct ranked *r;

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
    r = malloc((size_t)nr * sizeof(*r));
    if (!r) {
        free(*keep);
        *keep = NULL;
        return -ENOMEM;
    }
    nr = 0;
    for (uint32_t id = 0; id < n; id++) {
        double share = 0;

        if (!site_costs(ana_model_site(m, id), cost))
            continue;
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            if (total[c] > 0 && (double)cost[c] / (double)total[c] > share)
                share = (double)cost[c] / (double)total[c];
        r[nr++] = (struct ranked){share, id};
    }
    qsort(r, nr, sizeof(*r), by_share);
    for (uint32_t i = 0; i < max; i++)
        (*keep)[r[i].stack] = 1;
    free(r);
    return max;
}

int ana_flame_build(struct ana_tree *t, const struct ana_model *m, struct ana_stacks *st,
                    int inverted, const uint8_t *keep)
{
    int64_t other[ANA_FLAME_NR_COSTS] = {0};
    uint32_t *labels = NULL, cap = 0, nr_other = 0;
    int rc = 0;

    for (uint32_t id = 0; id < ana_model_nr_sites(m) && !rc; id++) {
        const struct ana_frame *frames;
        int64_t cost[ANA_FLAME_NR_COSTS];
        int n;

        if (!site_costs(ana_model_site(m, id), cost))
            continue;
        if (keep && !keep[id]) {
            for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
                other[c] += cost[c];
            nr_other++;
            continue;
        }
        n = ana_stacks_get(st, id, &frames);
        if (n < 0) {
            rc = n;
            break;
        }
        if ((uint32_t)n + 1 > cap) {
            uint32_t *l = realloc(labels, ((size_t)n + 1) * sizeof(*l));

            if (!l) {
                rc = -ENOMEM;
                break;
            }
            labels = l;
            cap = (uint32_t)n + 1;
        }
        if (n == 0) {
            /* Events without a stack still count: under "(no stack)". */
            rc = ana_stacks_leaf(st, id, &labels[0]);
            n = 1;
        } else {
            /* ana_stacks gives the leaf first. */
            for (int i = 0; i < n; i++)
                labels[i] = frames[inverted ? i : n - 1 - i].function;
        }
        if (!rc)
            rc = ana_tree_add(t, labels, (uint32_t)n, cost);
    }
    free(labels);
    if (!rc && nr_other) {
        char name[64];
        uint32_t label;

        snprintf(name, sizeof(name), "(%u other call sites)", nr_other);
        if (!(rc = ana_stacks_intern(st, name, &label)))
            rc = ana_tree_add(t, &label, 1, other);
    }
    return rc;
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
