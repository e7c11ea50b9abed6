/* SPDX-License-Identifier: MIT */
/* Call trees with inclusive and self cost (see ana_tree.h). */
#include "analysis/model/ana_tree.h"
#include "util/util_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int new_node(struct ana_tree *t, uint32_t parent, uint32_t label, uint32_t *out)
{
    if (UTIL_ARRAY_RESERVE(t->nodes, t->cap_nodes, (size_t)t->nr_nodes + 1, 256))
        return -ENOMEM;
    struct ana_tree_node *nd = &t->nodes[t->nr_nodes];
    memset(nd, 0, sizeof(*nd));
    nd->label = label;
    nd->parent = parent;
    nd->first_child = ANA_TREE_NONE;
    nd->next_sibling = ANA_TREE_NONE;
    if (parent != ANA_TREE_NONE) {
        struct ana_tree_node *p = &t->nodes[parent];
        nd->depth = p->depth + 1;
        nd->next_sibling = p->first_child;
        p->first_child = t->nr_nodes;
    }
    *out = t->nr_nodes++;
    return 0;
}

int ana_tree_init(struct ana_tree *t, unsigned nr_metrics, uint32_t max_depth)
{
    uint32_t root;

    memset(t, 0, sizeof(*t));
    if (nr_metrics > ANA_TREE_MAX_METRICS)
        return -EINVAL;
    t->nr_metrics = nr_metrics;
    t->max_depth = max_depth;
    ana_map_init(&t->children, sizeof(uint32_t));
    return new_node(t, ANA_TREE_NONE, ANA_TREE_NONE, &root);
}

void ana_tree_release(struct ana_tree *t)
{
    free(t->nodes);
    free(t->seen);
    ana_map_release(&t->children);
    memset(t, 0, sizeof(*t));
}

int ana_tree_add(struct ana_tree *t, const uint32_t *labels, uint32_t n, const int64_t *metrics)
{
    uint32_t at = 0;
    int rc;

    if (t->max_depth && n > t->max_depth)
        n = t->max_depth;
    for (unsigned k = 0; k < t->nr_metrics; k++)
        t->nodes[0].incl[k] += metrics[k];
    for (uint32_t i = 0; i < n; i++) {
        int created;
        uint32_t *slot = ana_map_put(&t->children, ((uint64_t)at << 32 | labels[i]) + 1, &created);
        if (!slot)
            return -ENOMEM;
        if (created) {
            uint32_t child;
            if ((rc = new_node(t, at, labels[i], &child)))
                return rc;
            /* new_node touches only the node array: slot is still valid. */
            *slot = child;
        }
        at = *slot;
        for (unsigned k = 0; k < t->nr_metrics; k++)
            t->nodes[at].incl[k] += metrics[k];
    }
    for (unsigned k = 0; k < t->nr_metrics; k++)
        t->nodes[at].self[k] += metrics[k];
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

int ana_tree_add_flat(struct ana_tree *t, const uint32_t *labels, uint32_t n,
                      const int64_t *metrics)
{
    int rc;

    if (!n)
        return ana_tree_add(t, labels, 0, metrics);
    if (UTIL_ARRAY_RESERVE(t->seen, t->cap_seen, n, 256))
        return -ENOMEM;
    memcpy(t->seen, labels, n * sizeof(*labels));
    qsort(t->seen, n, sizeof(*t->seen), cmp_u32);
    for (uint32_t i = 0; i < n; i++) {
        if (i && t->seen[i] == t->seen[i - 1])
            continue;
        /* the leaf's node gets self cost (and its inclusive) from a path
         * of one; every other function its inclusive, taken back from
         * the root, which counts the path once */
        if ((rc = ana_tree_add(t, &t->seen[i], 1, metrics)))
            return rc;
        uint32_t at = *(const uint32_t *)ana_map_get(&t->children, (uint64_t)t->seen[i] + 1);
        for (unsigned k = 0; k < t->nr_metrics; k++) {
            t->nodes[0].incl[k] -= metrics[k];
            if (t->seen[i] != labels[n - 1])
                t->nodes[at].self[k] -= metrics[k];
        }
    }
    for (unsigned k = 0; k < t->nr_metrics; k++)
        t->nodes[0].incl[k] += metrics[k];
    return 0;
}

struct sort_ctx {
    const struct ana_tree_node *nodes;
    unsigned metric;
    ana_tree_name_fn *name;
    void *arg;
};

static int by_metric(const void *a, const void *b, void *arg)
{
    const struct sort_ctx *ctx = arg;
    const struct ana_tree_node *x = &ctx->nodes[*(const uint32_t *)a];
    const struct ana_tree_node *y = &ctx->nodes[*(const uint32_t *)b];
    int64_t vx = x->incl[ctx->metric], vy = y->incl[ctx->metric];
    uint64_t ax = vx < 0 ? (uint64_t)0 - (uint64_t)vx : (uint64_t)vx;
    uint64_t ay = vy < 0 ? (uint64_t)0 - (uint64_t)vy : (uint64_t)vy;

    if (ax != ay)
        return ax < ay ? 1 : -1;
    return strcmp(ctx->name(ctx->arg, x->label), ctx->name(ctx->arg, y->label));
}

int ana_tree_sort(struct ana_tree *t, unsigned metric, ana_tree_name_fn *name, void *arg)
{
    struct sort_ctx ctx = {t->nodes, metric, name, arg};

    return ana_tree_sort_children(t, by_metric, &ctx);
}

int ana_tree_sort_children(struct ana_tree *t, int (*cmp)(const void *, const void *, void *),
                           void *arg)
{
    uint32_t *tmp = malloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*tmp));

    if (!tmp)
        return -ENOMEM;
    for (uint32_t i = 0; i < t->nr_nodes; i++) {
        uint32_t n = 0;
        for (uint32_t c = t->nodes[i].first_child; c != ANA_TREE_NONE; c = t->nodes[c].next_sibling)
            tmp[n++] = c;
        if (n < 2)
            continue;
        qsort_r(tmp, n, sizeof(*tmp), cmp, arg);
        t->nodes[i].first_child = tmp[0];
        for (uint32_t k = 0; k + 1 < n; k++)
            t->nodes[tmp[k]].next_sibling = tmp[k + 1];
        t->nodes[tmp[n - 1]].next_sibling = ANA_TREE_NONE;
    }
    free(tmp);
    return 0;
}
