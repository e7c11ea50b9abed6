/* SPDX-License-Identifier: MIT */
/* Flame graphs: a tree of frames merged by name along call paths, each node
 * carrying every cost at once, drawn as an SVG with its own zoom and search
 * script (as flamegraph.pl's SVGs have), as folded stacks, or as data for
 * the HTML report.
 *
 * The costs themselves come from the analysis model (per stack: how many
 * allocations, bytes, leaked bytes, bytes live at the peak, temporary
 * allocations); this tree only sums them along the frames' names, so a
 * picture shows the same numbers as `memscribe report`. */
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

/* One node. Node 0 is the root ("all"); children are linked in name order
 * once ana_flame_finish() has run. cost[] is inclusive (this node and
 * everything under it). */
struct ana_flame_node {
    uint32_t name; /* index into the tree's names */
    uint32_t parent;
    uint32_t depth; /* root 0 */
    uint32_t first_child; /* 0: none */
    uint32_t next_sibling; /* 0: none */
    uint64_t cost[ANA_FLAME_NR_COSTS];
};

struct ana_flame;

int ana_flame_create(struct ana_flame **out);
void ana_flame_destroy(struct ana_flame *f);

/* Add one call path, outermost frame first (for an inverted graph the
 * caller passes the allocating function first), with its costs. Frames
 * are copied. Returns 0 or -ENOMEM. */
int ana_flame_add(struct ana_flame *f, const char *const *frames, uint32_t nr_frames,
                  const uint64_t cost[ANA_FLAME_NR_COSTS]);

/* Sort children by name (flame graphs order siblings alphabetically, so
 * that the same call path sits at the same place in every graph). Call
 * once after the last add; returns 0 or -ENOMEM. */
int ana_flame_finish(struct ana_flame *f);

uint32_t ana_flame_nr_nodes(const struct ana_flame *f);
const struct ana_flame_node *ana_flame_node(const struct ana_flame *f, uint32_t i);
uint32_t ana_flame_nr_names(const struct ana_flame *f);
const char *ana_flame_name(const struct ana_flame *f, uint32_t name);

struct ana_flame_svg_options {
    enum ana_flame_cost cost;
    int inverted;      /* only changes the title and the layout direction */
    const char *title; /* escaped; NULL: "Flame graph: <cost>" */
    const char *subtitle; /* escaped, e.g. the command line; may be NULL */
    double width;      /* 0: 1200 */
};

/* Draw the graph for one cost as a standalone SVG with an inline script
 * (click to zoom, Ctrl-F or the Search button to highlight). Nodes whose
 * width would be under a tenth of a pixel are left out. Returns 0 or
 * -errno from writing. */
int ana_flame_write_svg(const struct ana_flame *f, FILE *out,
                        const struct ana_flame_svg_options *opt);

/* Folded stacks ("a;b;c 123" per line, the format flamegraph.pl and
 * speedscope read): one line per node with a non-zero self cost (its cost
 * minus its children's). ';' and line breaks inside names are replaced so
 * a name cannot split a line. Returns 0 or -errno from writing. */
int ana_flame_write_folded(const struct ana_flame *f, FILE *out, enum ana_flame_cost cost);

#endif
