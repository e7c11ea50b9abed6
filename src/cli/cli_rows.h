/* SPDX-License-Identifier: MIT */
/* Rows by what they show: call sites whose cleaned stacks name the same
 * places (function, file, line of every frame, in order) in one process
 * image are one row in every table, so an unrolled loop's three call
 * addresses on one source line are one row of Count 3, not three rows that
 * read the same. Grouping happens before ranking and cutting to --top, and
 * adds the per-stack numbers (they are additive). */
#ifndef CLI_ROWS_H
#define CLI_ROWS_H

#include <stdint.h>

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_model.h"
#include "cli/cli_ana.h"

/* A key that is the same for two stacks exactly when their rows would show
 * the same frames: a string id of the place sequence. */
uint32_t cli_rows_key(struct cli_ana *a, uint32_t stack);

/* The model's sites merged into rows: indexed by stack id like
 * ana_model_site(); each row's sums sit at its first (lowest) stack id, the
 * other ids are empty (image UINT32_MAX). nr_sites entries; free() it. */
struct ana_site *cli_rows_sites(struct cli_ana *a, const struct ana_model *m);

/* The group's first stack id for (image, stack): rows of window keys. Call
 * with stacks in increasing order for each map m (an ana_map of uint32_t,
 * initialised by the caller). Dies on failure. */
uint32_t cli_rows_first(struct cli_ana *a, struct ana_map *m, uint32_t image, uint32_t stack);

#endif
