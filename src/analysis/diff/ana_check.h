/* SPDX-License-Identifier: MIT */
/* memscribe check's rule: a run's numbers held against limits, and
 * against a base run's (growth), each check deciding pass or fail exactly
 * (integers; a percentage is kept in millionths of a percent and compared
 * in 128 bits, never in floating point). The numbers themselves are the
 * model's (docs/architecture.md, "Meanings"); the caller measures both
 * runs the same way (suppressions, --exe) and hands them in. docs/check.md. */
#ifndef ANA_CHECK_H
#define ANA_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/diff/ana_diff.h"

/* The numbers a check can hold, each defined once (docs/architecture.md,
 * "Meanings"): X(id, name, key, bytes, words, whole, metric). name is the
 * option's (--max-NAME, --max-growth NAME=...); key the field of report
 * --format=json's parts (docs/report.md) that holds the same number, so a
 * check's value is that field of report's "total"; words what check's
 * text calls it, as report's text does; whole, for a number that leaves
 * suppressed leaks out, what the number counts before they are left out
 * (report's word), else NULL; metric the ana_diff metric --max-growth
 * lists the sites that grew by (-1: none, RSS is not counted by site).
 * The last four are memcheck's reachability classes at exit (record
 * --reach, docs/leaks.md): lost is definitely and indirectly lost. */
#define ANA_CHECK_MEASURES(X)                                                                      \
    X(ANA_CHECK_LEAKED, "leaked", "unsuppressed_leaked_bytes", true, "unsuppressed leaked",        \
      "leaked", ANA_DIFF_LEAKED)                                                                   \
    X(ANA_CHECK_LEAKED_BLOCKS, "leaked-blocks", "unsuppressed_leaked_blocks", false,               \
      "unsuppressed leaked blocks", "leaked", ANA_DIFF_LEAKED_BLOCKS)                              \
    X(ANA_CHECK_PEAK, "peak", "peak_bytes", true, "peak heap in use", NULL, ANA_DIFF_PEAK)         \
    X(ANA_CHECK_TEMPORARY, "temporary", "temporary", false, "temporary allocations", NULL,         \
      ANA_DIFF_TEMPORARY)                                                                          \
    X(ANA_CHECK_ALLOCATIONS, "allocations", "allocations", false, "allocations", NULL,             \
      ANA_DIFF_ALLOCS)                                                                             \
    X(ANA_CHECK_PEAK_RSS, "peak-rss", "peak_rss_bytes", true, "peak RSS", NULL, -1)                \
    X(ANA_CHECK_DEFINITELY_LOST, "definitely-lost", "unsuppressed_definitely_lost_bytes", true,    \
      "unsuppressed definitely lost", "definitely lost", ANA_DIFF_DEFINITE)                        \
    X(ANA_CHECK_LOST, "lost", "unsuppressed_lost_bytes", true, "unsuppressed lost", "lost",        \
      ANA_DIFF_LOST)                                                                               \
    X(ANA_CHECK_LOST_BLOCKS, "lost-blocks", "unsuppressed_lost_blocks", false,                     \
      "unsuppressed lost blocks", "lost", ANA_DIFF_LOST_BLOCKS)                                    \
    X(ANA_CHECK_POSSIBLY_LOST, "possibly-lost", "unsuppressed_possibly_lost_bytes", true,          \
      "unsuppressed possibly lost", "possibly lost", ANA_DIFF_POSSIBLE)

#define ANA_CHECK_ENUM(id, name, key, bytes, words, whole, metric) id,
enum ana_check_measure { ANA_CHECK_MEASURES(ANA_CHECK_ENUM) ANA_CHECK_NR_MEASURES };
#undef ANA_CHECK_ENUM

/* The option's word ("leaked-blocks"), report's JSON key
 * ("unsuppressed_leaked_blocks"), whether the number is bytes (limits take
 * 64K, 2M), the words of the text ("unsuppressed leaked blocks"), what it
 * counts before suppressions (NULL: they do not apply), the ana_diff
 * metric of its sites (-1: none). */
const char *ana_check_measure_name(enum ana_check_measure m);
const char *ana_check_measure_key(enum ana_check_measure m);
bool ana_check_measure_bytes(enum ana_check_measure m);
const char *ana_check_measure_words(enum ana_check_measure m);
const char *ana_check_measure_whole(enum ana_check_measure m);
int ana_check_measure_metric(enum ana_check_measure m);
/* The measure named by the first len bytes of name, or -EINVAL. */
int ana_check_measure_parse(const char *name, size_t len);

/* One run's numbers. known[m] is false where the trace cannot tell (no
 * RSS sample; temporary allocations of a sampled trace). suppressed[m]:
 * for a measure with a whole, what the suppressions left out of v[m]
 * (report's suppressed_* fields), v[m] + suppressed[m] the whole. */
struct ana_check_values {
    uint64_t v[ANA_CHECK_NR_MEASURES];
    uint64_t suppressed[ANA_CHECK_NR_MEASURES];
    bool known[ANA_CHECK_NR_MEASURES];
};

/* One check: the value at most `limit` (growth: the new value at most
 * `limit` above the base's; percent: at most limit millionths of a
 * percent of the base above it). */
struct ana_check_limit {
    enum ana_check_measure measure;
    bool growth;
    bool percent;
    uint64_t limit;
};

#define ANA_CHECK_PERCENT_ONE 1000000 /* millionths of a percent in one percent */

/* Parse a limit of measure m into *out: a count, or for bytes a size
 * (0, 4096, 64K, 2M, 1G); with growth also a percentage (5%, 2.5%, at most
 * six decimals). Returns 0 or -EINVAL. */
int ana_check_parse_limit(enum ana_check_measure m, bool growth, const char *s,
                          struct ana_check_limit *out);

/* Parse --max-growth's list "peak=5%,leaked=0,allocations=10%" into
 * out[*nr..], at most max in all (*nr grows). Returns 0, -EINVAL (*bad
 * then points at the item that does not parse) or -E2BIG. */
int ana_check_parse_growth(const char *list, struct ana_check_limit *out, size_t max, size_t *nr,
                           const char **bad);

/* A check decided. */
struct ana_check_result {
    bool known;       /* the numbers it needs are known */
    bool pass;        /* known and within the limit */
    uint64_t value;   /* the run's */
    uint64_t base;    /* growth: the base run's */
    int64_t growth;   /* growth: value - base */
    uint64_t allowed; /* the most value (growth: value - base) may be, in the measure's unit
                         (a percentage worked out on the base, rounded down) */
};

/* Decide l on run (and base, for a growth check; NULL otherwise). */
void ana_check_eval(const struct ana_check_limit *l, const struct ana_check_values *run,
                    const struct ana_check_values *base, struct ana_check_result *out);

#endif
