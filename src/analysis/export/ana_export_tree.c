/* SPDX-License-Identifier: MIT */
/* Call trees of symbolized frames (ana_export_tree.h). */
#include "analysis/export/ana_export_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ana_xtree_init(struct ana_xtree *t, struct ana_strtab *labels)
{
    memset(t, 0, sizeof(*t));
    t->labels = labels;
    t->cap = 256;
    t->nodes = calloc(t->cap, sizeof(*t->nodes));
    if (!t->nodes)
        return -ENOMEM;
    t->nr = 1;
    return 0;
}

static int child(struct ana_xtree *t, uint32_t parent, uint32_t label, uint32_t *out)
{
    uint64_t key = ((uint64_t)parent << 32 | label) + 1;
    int rc;

    if (ana_xmap_get(&t->children, key, out))
        return 0;
    if (t->nr == t->cap) {
        struct ana_xtree_node *n = realloc(t->nodes, 2 * t->cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        t->nodes = n;
        t->cap *= 2;
    }
    *out = t->nr++;
    t->nodes[*out] =
        (struct ana_xtree_node){.label = label, .next_sibling = t->nodes[parent].first_child};
    t->nodes[parent].first_child = *out;
    t->nodes[parent].nr_children++;
    if ((rc = ana_xmap_put(&t->children, key, *out)))
        return rc;
    return 0;
}

int ana_xtree_add(struct ana_xtree *t, const struct ana_sym_stack *st, uint64_t bytes,
                  ana_xtree_label_fn *label)
{
    char buf[8192];
    uint32_t node = 0, idx;
    int rc;

    t->nodes[0].bytes += bytes;
    for (uint32_t i = 0; i < st->nr_lines; i++) {
        if ((rc = ana_strtab_intern(t->labels, label(st->lines[i].frame, buf, sizeof(buf)), &idx)) <
            0)
            return rc;
        if ((rc = child(t, node, idx, &node)))
            return rc;
        t->nodes[node].bytes += bytes;
    }
    return 0;
}

void ana_xtree_release(struct ana_xtree *t)
{
    free(t->nodes);
    ana_map_release(&t->children);
    memset(t, 0, sizeof(*t));
}
