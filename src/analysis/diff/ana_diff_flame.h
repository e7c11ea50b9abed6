/* SPDX-License-Identifier: MIT */
/* The base side of a differential flame graph: for each frame of the NEW
 * run's flame tree, the cost of the same call path (by function names) in
 * the BASE run's tree. The graph's widths come from NEW and its colours
 * from the change, as in differential flame graphs. */
#ifndef ANA_DIFF_FLAME_H
#define ANA_DIFF_FLAME_H

#include <stdint.h>

#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"

/* Both trees must be sorted by name (ana_flame_sort). Fills a fresh array
 * (*out, freed by the caller) with one value per node of t: the
 * inclusive metric of the node of tb on the same path of names, 0 if tb
 * has none. Returns 0 or -ENOMEM. */
int ana_diff_flame_match(const struct ana_tree *t, ana_flame_name_fn *name, void *arg,
                         const struct ana_tree *tb, ana_flame_name_fn *base_name, void *base_arg,
                         unsigned metric, int64_t **out);

#endif
