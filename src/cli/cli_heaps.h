/* SPDX-License-Identifier: MIT */
/* The heaps of a trace with pools of the program's own (format 1.4,
 * memscribe/annotate.h), as report and leaks print them: each heap of a
 * process (malloc's, each pool) with its numbers (ana_heaps.h). */
#ifndef CLI_HEAPS_H
#define CLI_HEAPS_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/core/ana_json.h"
#include "analysis/model/ana_heaps.h"
#include "cli/cli_ana.h"

/* Compute the heaps of a's trace up to until_ns (UINT64_MAX: the end) if
 * it has pools; else h stays empty (h->nr == 0) and nothing is read. Dies
 * on a reader error. Release h with ana_heaps_release(). */
void cli_heaps_load(struct cli_ana *a, struct ana_heaps *h, uint64_t until_ns);

/* report: "  heaps:" and a line per heap of image, with allocations,
 * peak, leaked and temporary; nothing if h is empty. */
void cli_heaps_text(struct cli_ana *a, const struct ana_heaps *h, uint32_t image, FILE *out);

/* leaks: "  by heap: NAME B bytes in N blocks; ..." of image's heaps
 * that hold leaks; nothing if h is empty. */
void cli_heaps_leaks_text(struct cli_ana *a, const struct ana_heaps *h, uint32_t image, FILE *out);

/* "heaps": [...] of image's heaps (every number), if h is not empty. */
void cli_heaps_json(struct cli_ana *a, const struct ana_heaps *h, uint32_t image,
                    struct ana_json *j);

#endif
