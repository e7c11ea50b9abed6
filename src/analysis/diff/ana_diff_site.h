/* SPDX-License-Identifier: MIT */
/* What `diff` and `html --base` match call sites by: a stack's key (its
 * symbolized function chain, or function, file and line), and the five
 * numbers of a heap model's site. */
#ifndef ANA_DIFF_SITE_H
#define ANA_DIFF_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_stacks.h"
#include "analysis/diff/ana_diff.h"
#include "analysis/model/ana_model.h"

/* The key of stack id: its frames' function names (with lines: their
 * places, "f (file.c:12)"), leaf first, one per line, NUL-terminated in
 * *buf (grown as needed, *cap its size). Returns the key's length (0 for
 * a stack without frames) or -errno. */
long ana_diff_site_key(struct ana_stacks *st, uint32_t stack, int lines, char **buf, size_t *cap);

/* The site's allocations, bytes, peak contribution (at the peak of all
 * images), leaked bytes, temporary allocations and leaked blocks (the
 * classes' metrics 0: the caller's, from ana_reach.h). Returns 1 if any of
 * them is not zero. */
int ana_diff_site_values(const struct ana_site *site, uint64_t v[ANA_DIFF_NR_METRICS]);

#endif
