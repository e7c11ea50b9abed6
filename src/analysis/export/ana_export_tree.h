/* SPDX-License-Identifier: MIT */
/* A call tree of symbolized frames with a byte count per node, built from
 * per-stack values, for the formats that show one (massif's heap tree).
 * Children are keyed by (parent, label) so wide nodes stay cheap. */
#ifndef ANA_EXPORT_TREE_H
#define ANA_EXPORT_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_map.h"

struct ana_xtree_node {
    uint32_t label; /* index in labels */
    uint32_t first_child;
    uint32_t next_sibling;
    uint32_t stack; /* the lowest stack added through it */
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
/* Add bytes along the frames st of stack id stack, the leaf under the root. */
int ana_xtree_add(struct ana_xtree *t, const struct ana_sym_stack *st, uint32_t stack,
                  uint64_t bytes, ana_xtree_label_fn *label);
/* The order of siblings: by decreasing bytes, then by decreasing lowest
 * stack (a tree made by adding its stacks in the order of their ids lists
 * its nodes so, newest first): the same whatever the order the stacks
 * were added in. A comparison for qsort_r() of node indexes, arg the
 * nodes. */
int ana_xtree_order(const void *a, const void *b, void *arg);
void ana_xtree_release(struct ana_xtree *t);

/* A call tree too large to keep (what every process of a tree left at the
 * end), made at the end only as deep as it is shown: its stacks are
 * written to a scratch file as they come (their frames' labels interned),
 * and the tree is made of the root's children and the children of every
 * node shown(bytes) says is shown, one level of the file's stacks a pass,
 * the stacks under a node not shown dropped. A tree printed as massif
 * prints one (the children of the nodes shown) is the same as the whole
 * one; memory is the labels and what is shown. */
struct ana_xtree_later {
    struct ana_xscratch_out out;
    uint64_t root_bytes;
    struct ana_strtab *labels;
};

/* Whether a node of bytes bytes has its children shown. */
typedef bool ana_xtree_shown_fn(void *arg, uint64_t bytes);

/* Open l's scratch file; its labels go into labels. 0 or -errno. */
int ana_xtree_later_open(struct ana_xtree_later *l, struct ana_strtab *labels);
/* ana_xtree_add, into the file. */
int ana_xtree_later_add(struct ana_xtree_later *l, const struct ana_sym_stack *st, uint32_t stack,
                        uint64_t bytes, ana_xtree_label_fn *label);
/* Make *t (released by the caller in any case) of what was added, as
 * shown says. 0 or -errno. */
int ana_xtree_later_make(struct ana_xtree_later *l, struct ana_xtree *t, ana_xtree_shown_fn *shown,
                         void *arg);
void ana_xtree_later_release(struct ana_xtree_later *l);

#endif
