/* SPDX-License-Identifier: MIT */
/* A call tree of symbolized frames with a byte count per node, built from
 * per-stack values, for the formats that show one (massif's heap tree).
 * Children are keyed by (parent, label) so wide nodes stay cheap. */
#ifndef ANA_EXPORT_TREE_H
#define ANA_EXPORT_TREE_H

#include <stdint.h>

#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_map.h"

struct ana_xtree_node {
    uint32_t label; /* index in labels */
    uint32_t first_child;
    uint32_t next_sibling;
    uint32_t nr_children;
    uint64_t bytes;
};

struct ana_xtree {
    struct ana_xtree_node *nodes; /* nodes[0] is the root */
    uint32_t nr, cap;
    struct ana_map children; /* (parent, label) -> node */
    struct ana_strtab *labels;
};

/* label_fn formats one frame's label into buf. */
typedef const char *ana_xtree_label_fn(const struct ana_sym_frame *f, char *buf, size_t size);

int ana_xtree_init(struct ana_xtree *t, struct ana_strtab *labels);
/* Add bytes along a stack's frames, the leaf under the root. */
int ana_xtree_add(struct ana_xtree *t, const struct ana_sym_stack *st, uint64_t bytes,
                  ana_xtree_label_fn *label);
void ana_xtree_release(struct ana_xtree *t);

#endif
