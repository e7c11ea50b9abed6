/* SPDX-License-Identifier: MIT */
/* A call tree built from paths of labels (function string ids), each path
 * carrying a vector of metrics (allocations, bytes, leaked, ...). Every
 * node has inclusive cost (all paths through it) and self cost (paths that
 * end at it). Top-down trees get root-first paths (main first), bottom-up
 * trees leaf-first ones (the allocating function at the root). A depth
 * limit folds deeper frames into the node at the limit. Node 0 is the
 * root; its inclusive cost is the total. */
#ifndef ANA_TREE_H
#define ANA_TREE_H

#include <stdint.h>

#include "analysis/core/ana_map.h"

#define ANA_TREE_MAX_METRICS 8
#define ANA_TREE_NONE UINT32_MAX

struct ana_tree_node {
    uint32_t label; /* ANA_TREE_NONE for the root */
    uint32_t parent;
    uint32_t first_child; /* ANA_TREE_NONE if a leaf */
    uint32_t next_sibling;
    uint32_t depth; /* root 0 */
    int64_t incl[ANA_TREE_MAX_METRICS];
    int64_t self[ANA_TREE_MAX_METRICS];
};

struct ana_tree {
    struct ana_tree_node *nodes;
    uint32_t nr_nodes, cap_nodes;
    unsigned nr_metrics;
    uint32_t max_depth;      /* 0: no limit */
    struct ana_map children; /* (parent << 32 | label) + 1 -> node index */
    uint32_t *seen;          /* ana_tree_add_flat's labels of one path, sorted */
    size_t cap_seen;
};

/* Returns 0, -EINVAL (nr_metrics too large) or -ENOMEM. */
int ana_tree_init(struct ana_tree *t, unsigned nr_metrics, uint32_t max_depth);
void ana_tree_release(struct ana_tree *t);

/* Add metrics along labels[0..n-1] (root side first). Returns 0 or -ENOMEM. */
int ana_tree_add(struct ana_tree *t, const uint32_t *labels, uint32_t n, const int64_t *metrics);

/* The flat list instead of a tree (heaptrack_gui's Caller / Callee list):
 * one node under the root per function of labels[0..n-1] (root side
 * first), each with the metrics added once however often the path holds
 * it (a recursion), as inclusive cost; the last label's self cost too.
 * Returns 0 or -ENOMEM. */
int ana_tree_add_flat(struct ana_tree *t, const uint32_t *labels, uint32_t n,
                      const int64_t *metrics);

/* Order each node's children by inclusive metric, largest first (by
 * absolute value, so negative Impacting Sizes rank too); ties by name(arg,
 * label), so that the order is the same whatever order the paths came in
 * (a fold adds each process's as it ends). Returns 0 or -ENOMEM. */
typedef const char *ana_tree_name_fn(void *arg, uint32_t label);
int ana_tree_sort(struct ana_tree *t, unsigned metric, ana_tree_name_fn *name, void *arg);

/* Order every node's children by cmp, a qsort_r comparator over node
 * indexes (uint32_t) that gets arg. Returns 0 or -ENOMEM. */
int ana_tree_sort_children(struct ana_tree *t, int (*cmp)(const void *, const void *, void *),
                           void *arg);

#endif
