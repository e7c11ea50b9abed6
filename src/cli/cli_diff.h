/* SPDX-License-Identifier: MIT */
/* Comparing against a base run for the commands that show one run
 * (flamegraph --diff): the base trace opened with the same symbol
 * options, its numbers paired with the new run's by function names. */
#ifndef CLI_DIFF_H
#define CLI_DIFF_H

#include <stdint.h>

#include "analysis/diff/ana_diff.h"
#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"
#include "cli/cli_ana.h"

/* The base run's cost for each node of t, the new run's flame tree (built
 * from nw's stacks and sorted by name): a fresh array of t->nr_nodes
 * values, 0 where the base has no such call path. Dies naming base_path
 * on failure. */
int64_t *cli_diff_flame_base(struct cli_ana *nw, const char *base_path, const struct ana_tree *t,
                             enum ana_flame_cost cost, int inverted);

/* Each site of m (a's trace) into side `which` of d, keyed by its frames'
 * functions (lines: function, file and line), leaf first, one per line:
 * memscribe diff's matching (ana_diff_site.h). supp (may be NULL): by
 * stack id, sites whose leaks suppressions list apart: their leaks and
 * classes count 0, their other numbers as any site's. reach (may be
 * NULL): the leak classes of m's blocks. Dies on failure. */
struct ana_reach;
void cli_diff_add_sites(struct cli_ana *a, const struct ana_model *m, struct ana_diff *d,
                        enum ana_diff_side which, int lines, const bool *supp,
                        const struct ana_reach *reach);
/* The same of the rows a tree's fold made by key alone (cli_fold.h: keyed
 * as lines says), whose sites they add up (a row's leak: its sites' above
 * 0); a row whose leaks a suppression matches (its tag) leaks 0. */
struct ana_fold;
void cli_diff_add_fold(struct cli_ana *a, const struct ana_fold *f, struct ana_diff *d,
                       enum ana_diff_side which, int lines);

/* Set column col of t's last row to the site of key (leaf first, one
 * frame per line): in text, a row as every command lays it out (the
 * entry chain left out, library runs folded, the frame of interest shown:
 * ana_interest.h; --all-frames: every frame), at most frames items (0:
 * all), "... N more" for the callers cut; in JSON and CSV every frame, at
 * most frames of them, and "interest". A frame's class is what nw's
 * stacks, else base's (may be NULL), gave it. Dies on failure. */
struct ana_table;
void cli_diff_set_site(struct cli_ana *nw, struct cli_ana *base, struct ana_table *t, unsigned col,
                       const char *key, unsigned frames);

/* The base run of `html --base`: opens path into *b (with nw's symbol
 * options), builds its model, and fills *out. Close b with cli_ana_close()
 * and destroy out->model after the page is written. Dies on failure. */
struct ana_html_base;
void cli_diff_html_base(struct cli_ana *nw, const char *path, struct cli_ana *b,
                        struct ana_html_base *out);

#endif
