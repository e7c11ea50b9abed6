/* SPDX-License-Identifier: MIT */
/* Call trees of symbolized frames (ana_export_tree.h). */
#include "analysis/export/ana_export_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int child(struct ana_xtree *t, uint32_t parent, uint32_t label, uint32_t stack,
                 uint32_t *out)
{
    uint64_t key = ((uint64_t)parent << 32 | label) + 1;
    int rc;

    if (ana_xmap_get(&t->children, key, out)) {
        if (stack < t->nodes[*out].stack)
            t->nodes[*out].stack = stack;
        return 0;
    }
    if (t->nr == t->cap) {
        struct ana_xtree_node *n = realloc(t->nodes, 2 * t->cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        t->nodes = n;
        t->cap *= 2;
    }
    *out = t->nr++;
    t->nodes[*out] = (struct ana_xtree_node){
        .label = label, .next_sibling = t->nodes[parent].first_child, .stack = stack};
    t->nodes[parent].first_child = *out;
    if ((rc = ana_xmap_put(&t->children, key, *out)))
        return rc;
    return 0;
}

/* The label of line's frame, interned in labels. */
static int label_of(struct ana_strtab *labels, const struct ana_sym_line *line,
                    ana_xtree_label_fn *label, uint32_t *idx)
{
    char buf[8192];
    int rc = ana_strtab_intern(labels, label(line->frame, buf, sizeof(buf)), idx);

    return rc < 0 ? rc : 0;
}

int ana_xtree_add(struct ana_xtree *t, const struct ana_sym_stack *st, uint32_t stack,
                  uint64_t bytes, ana_xtree_label_fn *label)
{
    uint32_t node = 0, idx;
    int rc;

    t->nodes[0].bytes += bytes;
    for (uint32_t i = 0; i < st->nr_lines; i++) {
        if ((rc = label_of(t->labels, &st->lines[i], label, &idx)) ||
            (rc = child(t, node, idx, stack, &node)))
            return rc;
        t->nodes[node].bytes += bytes;
    }
    return 0;
}

int ana_xtree_order(const void *a, const void *b, void *arg)
{
    const struct ana_xtree_node *x = (const struct ana_xtree_node *)arg + *(const uint32_t *)a,
                                *y = (const struct ana_xtree_node *)arg + *(const uint32_t *)b;

    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return (x->stack < y->stack) - (x->stack > y->stack);
}

void ana_xtree_release(struct ana_xtree *t)
{
    free(t->nodes);
    ana_map_release(&t->children);
    memset(t, 0, sizeof(*t));
}

/* A stack in the later tree's file: the node its next label hangs under,
 * then that label and the rest. */
struct later_rec {
    uint64_t bytes;
    uint32_t node;
    uint32_t stack;
    uint32_t nr_labels;
    uint32_t unused; /* 0: no padding of unknown bytes in the file */
};

int ana_xtree_later_open(struct ana_xtree_later *l, struct ana_strtab *labels)
{
    memset(l, 0, sizeof(*l));
    l->labels = labels;
    l->out.fd = ana_xscratch_open("massif");
    return l->out.fd < 0 ? l->out.fd : 0;
}

int ana_xtree_later_add(struct ana_xtree_later *l, const struct ana_sym_stack *st, uint32_t stack,
                        uint64_t bytes, ana_xtree_label_fn *label)
{
    struct later_rec r = {.stack = stack, .bytes = bytes, .nr_labels = st->nr_lines};
    uint32_t idx;
    int rc;

    l->root_bytes += bytes;
    if (!bytes || !st->nr_lines)
        return 0;
    if ((rc = ana_xscratch_append(&l->out, &r, sizeof(r))))
        return rc;
    for (uint32_t i = 0; i < st->nr_lines; i++)
        if ((rc = label_of(l->labels, &st->lines[i], label, &idx)) ||
            (rc = ana_xscratch_append(&l->out, &idx, sizeof(idx))))
            return rc;
    return 0;
}

/* One level: each stack of the file under a node shown (the root, or one
 * shown says is) into its next node, and written back after what is
 * left of the file, one label shorter, if it goes deeper (the writes stay
 * behind the reads: the file is rewritten in place). Returns 0 or -errno. */
static int later_level(struct ana_xtree_later *l, struct ana_xtree *t, ana_xtree_shown_fn *shown,
                       void *arg)
{
    struct ana_xscratch_win w = {.fd = l->out.fd, .len = l->out.len};
    uint64_t pos = 0;
    int rc = 0;

    l->out.len = 0;
    while (pos < w.len && !rc) {
        const void *p;
        struct later_rec r;
        uint32_t label, node;

        if ((rc = ana_xscratch_get(&w, pos, sizeof(r), &p)))
            break;
        memcpy(&r, p, sizeof(r));
        pos += sizeof(r);
        if ((rc = ana_xscratch_get(&w, pos, (size_t)r.nr_labels * sizeof(label), &p)))
            break;
        pos += (uint64_t)r.nr_labels * sizeof(label);
        if (r.node && !shown(arg, t->nodes[r.node].bytes))
            continue;
        memcpy(&label, p, sizeof(label));
        if ((rc = child(t, r.node, label, r.stack, &node)))
            break;
        t->nodes[node].bytes += r.bytes;
        if (--r.nr_labels) {
            struct later_rec next = {
                .bytes = r.bytes, .node = node, .stack = r.stack, .nr_labels = r.nr_labels};
            if (!(rc = ana_xscratch_append(&l->out, &next, sizeof(next))))
                rc = ana_xscratch_append(&l->out, (const uint32_t *)p + 1,
                                         (size_t)r.nr_labels * sizeof(label));
        }
    }
    free(w.buf);
    return rc ? rc : ana_xscratch_flush(&l->out);
}

int ana_xtree_later_make(struct ana_xtree_later *l, struct ana_xtree *t, ana_xtree_shown_fn *shown,
                         void *arg)
{
    int rc;

    if ((rc = ana_xtree_init(t, l->labels)) || (rc = ana_xscratch_flush(&l->out)))
        return rc;
    t->nodes[0].bytes = l->root_bytes;
    while (l->out.len && !(rc = later_level(l, t, shown, arg)))
        ;
    return rc;
}

void ana_xtree_later_release(struct ana_xtree_later *l)
{
    if (l->labels && l->out.fd >= 0) /* opened */
        close(l->out.fd);
    l->labels = NULL;
}
