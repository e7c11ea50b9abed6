/* SPDX-License-Identifier: MIT */
/* The standard errors of a sampled trace's per-site estimates
 * (docs/record-sampling.md, "Standard errors").
 *
 * A block of r bytes is recorded with probability p (fmt_sample_prob), and
 * the sampler's points fall as a Poisson process over the bytes, so blocks
 * are recorded independently. A recorded block stands for e = r/p bytes
 * (rounded) and c blocks (w = 1/p rounded up or down at random, E[c] = w):
 * the sums of e and c over a site's recorded blocks are unbiased estimates
 * of its bytes and blocks. The variance of one block's byte term, I*e
 * (I: recorded or not), is r^2 (1 - p)/p, which e(e - r) estimates without
 * bias from a recorded block; the count term's is w - 1 + p v (v: the
 * rounding's variance), which c(c - 1) estimates without bias, and
 * w(w - 1) + v too, without being 0 for most blocks of a weight below 2
 * (ana_site_var.h holds the terms). Blocks
 * being independent, a site's variances are the sums of its recorded
 * blocks' terms: over its allocations (allocated bytes and blocks) and
 * over its blocks still live (leaked bytes and blocks, added at the
 * allocation and taken off at the free). An exact trace's terms are 0.
 *
 * A sum over k recorded blocks has the precision of k: a site's few
 * blocks claim too much of it (a Poisson count's plain estimate of its
 * variance, k, is 0 or 1 for a site whose true mean is 5 more often than
 * 3 standard errors allow). So each variance gets one recorded block's
 * term more, the mean term of the site's recorded allocations (k + 1 in
 * place of k for a count of blocks of one size, its mean after seeing k
 * under a flat prior): a leak of no recorded block says 0, with a
 * standard error of one block's weight.
 *
 * A share of a peak is a site's live bytes at the moment the estimated
 * heap was highest; its variance is taken as the share times the site's
 * variance per byte over its allocations (e - r for blocks of one size),
 * not summed over the blocks live then: every route that finds a peak's
 * shares (the replay, its ranges, the fold, the per-program view) then
 * gives the same, from the counters they already add up. */
#ifndef ANA_SITE_SE_H
#define ANA_SITE_SE_H

#include <stdint.h>

struct ana_site;

/* The standard errors of a site's (or a row's) figures, in bytes or
 * blocks: peak (of its share peak_bytes, the peak the caller shows),
 * leaked bytes and blocks, allocations, allocated bytes. */
struct ana_site_se {
    double peak, leaked, blocks, allocs, bytes;
};
void ana_site_se(const struct ana_site *s, uint64_t peak_bytes, struct ana_site_se *out);

#endif
