/* SPDX-License-Identifier: MIT */
/* Flame graphs: the call tree of the analysis core (frames merged by name
 * along call paths, every cost at once) drawn as an SVG with its own zoom
 * and search script (as flamegraph.pl's SVGs have), or written as folded
 * stacks. The costs come from the heap model's call sites (allocations,
 * bytes, leaked bytes, bytes live at the peak, temporary allocations), so
 * a picture shows the same numbers as `memscribe report` and `tree`. */
#ifndef ANA_FLAME_H
#define ANA_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ana_flame_cost {
    ANA_FLAME_ALLOCATIONS = 0, /* allocations made */
    ANA_FLAME_BYTES = 1,       /* bytes allocated */
    ANA_FLAME_LEAKED = 2,      /* bytes live at the end */
    ANA_FLAME_PEAK = 3,        /* bytes live at the heap's peak */
    ANA_FLAME_TEMPORARY = 4,   /* temporary allocations */
    ANA_FLAME_NR_COSTS = 5,
};

/* "allocations", "bytes", ...; and back (-EINVAL for an unknown name). */
const char *ana_flame_cost_name(enum ana_flame_cost c);
int ana_flame_cost_parse(const char *name, enum ana_flame_cost *out);
/* 1 if the cost is in bytes, 0 if it is a count. */
int ana_flame_cost_is_bytes(enum ana_flame_cost c);

/* The tree is the analysis core's call tree (ana_tree.h) with one metric
 * per cost, metric index = enum ana_flame_cost; labels are string ids that
 * a name function turns into text. */
struct ana_tree;
struct ana_model;
struct ana_stacks;
typedef const char *ana_flame_name_fn(void *arg, uint32_t label);

/* The call sites worth drawing when there are more than max (0: no
 * limit). Stacks are grouped first by what the picture shows, their chain
 * of functions (ana_stacks_key), and the groups ranked by the largest
 * share any cost gives them, ties by stack id. The max largest groups are
 * kept, and more while the rest would hold over 1 % of some total, up to
 * 8 x max. Sets (*keep)[stack] to 1 for the kept groups' stacks, for every
 * stack id of the model (a fresh array the caller frees). Returns how many
 * stacks are kept, or -errno. Programs with millions of distinct stacks
 * (deep recursion) would otherwise make trees of tens of millions of nodes
 * that no picture can show. */
long ana_flame_top_sites(const struct ana_model *m, struct ana_stacks *st, uint32_t max,
                         uint8_t **keep);

/* Fill t (initialised with ANA_FLAME_NR_COSTS metrics) from the model's
 * call sites: one path per stack with any cost, outermost frame first, or
 * the allocating function first when inverted. Frames are function names
 * from st (label = ana_stacks string id; name with ana_stacks_str_fn).
 * If keep is not NULL, sites it does not keep are added together as one
 * frame "(other call sites)" on the root, so totals stay exact. Returns 0
 * or -errno. */
int ana_flame_build(struct ana_tree *t, const struct ana_model *m, struct ana_stacks *st,
                    int inverted, const uint8_t *keep);
/* ana_flame_build with a frame of its own for each program (the
 * per-program view): a site of image i gets root_of_image[i] (a label of
 * st) as its outermost frame, for images below nr_images. */
int ana_flame_build_rooted(struct ana_tree *t, const struct ana_model *m, struct ana_stacks *st,
                           int inverted, const uint8_t *keep, const uint32_t *root_of_image,
                           uint32_t nr_images);
/* ana_flame_build_rooted from the rows a tree's replay folded at each
 * process's end (ana_fold.h, all_sites, keyed by functions: cli_fold.c):
 * a path per program's row under root_of_program[its program] (NULL: a
 * path per row by key alone, as ana_flame_build draws); when the
 * sites number more than max (0: no limit), the rows by key alone are
 * ranked as ana_flame_top_sites ranks its groups, and those not kept are
 * lumped. The same graph as ana_flame_build_rooted's of the whole model
 * with ana_flame_top_sites' keep. Returns 0 or -errno. */
struct ana_fold;
struct ana_map;
/* Which of f's rows by key alone a picture of at most max sites draws
 * (their key + 1 put in kept_keys, an ana_map of any value size): every
 * one with a cost when they are so few, else ranked as
 * ana_flame_top_sites ranks its groups. Returns 0 or -errno. */
int ana_flame_fold_kept(const struct ana_fold *f, uint32_t max, struct ana_map *kept_keys);
int ana_flame_build_folded(struct ana_tree *t, const struct ana_fold *f, struct ana_stacks *st,
                           int inverted, uint32_t max, const uint32_t *root_of_program);

/* Order every node's children by name: flame graphs sort siblings
 * alphabetically, so that the same call path sits at the same place in
 * every graph whatever the cost. Returns 0 or -ENOMEM. */
int ana_flame_sort(struct ana_tree *t, ana_flame_name_fn *name, void *arg);

struct ana_flame_svg_options {
    enum ana_flame_cost cost;
    int inverted;         /* only changes the title and the layout direction */
    const char *title;    /* escaped; NULL: "Flame graph: <cost>" */
    const char *subtitle; /* escaped, e.g. the command line; may be NULL */
    double width;         /* 0: 1200 */
    /* A differential graph: the base run's cost per node of the tree
     * (ana_diff_flame_match). Widths stay the tree's; a frame is red as
     * far as it grew, blue as far as it shrank, white if unchanged, and
     * its tooltip gives the change. NULL: an ordinary graph. */
    const int64_t *base;
};

/* Draw the graph for one cost as a standalone SVG with an inline script
 * (click to zoom, Ctrl-F or the Search button to highlight). Nodes whose
 * width would be under a tenth of a pixel are left out. Returns 0 or
 * -errno from writing. */
int ana_flame_write_svg(const struct ana_tree *t, ana_flame_name_fn *name, void *arg, FILE *out,
                        const struct ana_flame_svg_options *opt);

/* Folded stacks ("a;b;c 123" per line, the format flamegraph.pl and
 * speedscope read): one line per node with a non-zero self cost. ';' and
 * line breaks inside names are replaced so that a name cannot split a
 * frame or a line. Returns 0 or -errno from writing. */
int ana_flame_write_folded(const struct ana_tree *t, ana_flame_name_fn *name, void *arg, FILE *out,
                           enum ana_flame_cost cost);

#endif
