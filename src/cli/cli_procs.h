/* SPDX-License-Identifier: MIT */
/* The process table of `report` on a process tree: one row per process
 * image (an exec starts a new one under the same pid) with its pid,
 * parent, executable, command (argv), start and end (exit or exec), peak
 * heap and leaked bytes, the tree's meaning of which docs/report.md
 * gives; and the programs table of the per-program view. */
#ifndef CLI_PROCS_H
#define CLI_PROCS_H

#include <stdio.h>

#include "analysis/core/ana_json.h"
#include "analysis/model/ana_model.h"
#include "cli/cli_ana.h"

/* Text: a titled table, or nothing with fewer than two processes seen. */
void cli_procs_text(struct cli_ana *a, const struct ana_model *m, FILE *out);

/* JSON: the member "process_table", an array of {image, pid, ppid, exe,
 * start_ns, end_ns (null while running), peak_bytes, leaked_bytes}; not
 * written with fewer than two processes seen. */
void cli_procs_json(struct cli_ana *a, const struct ana_model *m, struct ana_json *j);

/* Text: the programs table of the per-program view: the programs
 * order[0..n) (cli_ana.h: a->programs) with their processes, peak (the
 * largest sum of their running processes' heaps), leaked, allocations and
 * temporary allocations. */
void cli_programs_text(struct cli_ana *a, const struct ana_model *m, const uint32_t *order,
                       uint32_t n, FILE *out);

#endif
