/* SPDX-License-Identifier: MIT */
/* The variance terms of one recorded block of a sampled trace, which the
 * model adds up per site (ana_model.h, var_*) and ana_site_se.h turns into
 * standard errors; what they estimate and why: ana_site_se.h. */
#ifndef ANA_SITE_VAR_H
#define ANA_SITE_VAR_H

#include <stdint.h>

/* One recorded block's variance terms: est the bytes it stands for, raw
 * its recorded size, count the blocks it stands for. Bytes: e(e - r).
 * Blocks: w(w - 1) + f(1 - f) with its weight w = 1/p = e/r and f the
 * fraction that count's random rounding (fmt_reader_estimates) rounds,
 * whose expectation is count's own c(c - 1) but which is never 0 for a
 * block that had a chance of being missed (c(c - 1) is, for most blocks
 * whose weight is below 2). A block of 0 bytes (weight unknown here)
 * falls back to c(c - 1). */
static inline double ana_se_bytes_term(uint64_t est, uint64_t raw)
{
    return est > raw ? (double)est * (double)(est - raw) : 0.0;
}
static inline double ana_se_count_term(uint64_t est, uint64_t raw, uint64_t count)
{
    if (!raw || est <= raw)
        return count > 1 ? (double)count * (double)(count - 1) : 0.0;
    double w = (double)est / (double)raw, f = w - (double)(uint64_t)w;

    return w * (w - 1.0) + f * (1.0 - f);
}

#endif
