/* SPDX-License-Identifier: MIT */
/* Comparing against a base run for the commands that show one run
 * (flamegraph --diff): the base trace opened with the same symbol
 * options, its numbers paired with the new run's by function names. */
#ifndef CLI_DIFF_H
#define CLI_DIFF_H

#include <stdint.h>

#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"
#include "cli/cli_ana.h"

/* The base run's cost for each node of t, the new run's flame tree (built
 * from nw's stacks and sorted by name): a fresh array of t->nr_nodes
 * values, 0 where the base has no such call path. Dies naming base_path
 * on failure. */
int64_t *cli_diff_flame_base(struct cli_ana *nw, const char *base_path, const struct ana_tree *t,
                             enum ana_flame_cost cost, int inverted);

/* The base run of `html --base`: opens path into *b (with nw's symbol
 * options), builds its model, and fills *out. Close b with cli_ana_close()
 * and destroy out->model after the page is written. Dies on failure. */
struct ana_html_base;
void cli_diff_html_base(struct cli_ana *nw, const char *path, struct cli_ana *b,
                        struct ana_html_base *out);

#endif
