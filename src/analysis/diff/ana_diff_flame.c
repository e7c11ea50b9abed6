/* SPDX-License-Identifier: MIT */
/* Pairing two flame trees' frames by call path (ana_diff_flame.h): both
 * trees list children by name, so each level is a merge of two sorted
 * lists, and the walk needs no recursion. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff/ana_diff_flame.h"

int ana_diff_flame_match(const struct ana_tree *t, ana_flame_name_fn *name, void *arg,
                         const struct ana_tree *tb, ana_flame_name_fn *base_name, void *base_arg,
                         unsigned metric, int64_t **out)
{
    int64_t *base = calloc(t->nr_nodes ? t->nr_nodes : 1, sizeof(*base));
    uint32_t *pairs = malloc(2 * (size_t)(t->nr_nodes ? t->nr_nodes : 1) * sizeof(*pairs));
    size_t top = 0;

    if (!base || !pairs) {
        free(base);
        free(pairs);
        return -ENOMEM;
    }
    if (t->nr_nodes && tb->nr_nodes) {
        pairs[top++] = 0;
        pairs[top++] = 0;
    }
    while (top) {
        uint32_t b = pairs[--top], n = pairs[--top];
        uint32_t c = t->nodes[n].first_child, cb = tb->nodes[b].first_child;

        base[n] = tb->nodes[b].incl[metric];
        while (c != ANA_TREE_NONE && cb != ANA_TREE_NONE) {
            int order =
                strcmp(name(arg, t->nodes[c].label), base_name(base_arg, tb->nodes[cb].label));

            if (order < 0) {
                c = t->nodes[c].next_sibling;
            } else if (order > 0) {
                cb = tb->nodes[cb].next_sibling;
            } else {
                pairs[top++] = c;
                pairs[top++] = cb;
                c = t->nodes[c].next_sibling;
                cb = tb->nodes[cb].next_sibling;
            }
        }
    }
    free(pairs);
    *out = base;
    return 0;
}
