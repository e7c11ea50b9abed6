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

/* The numbers a check can hold: X(id, name, JSON key, in bytes). The name
 * is the option's (--max-NAME, --max-growth NAME=...), the key report's
 * for the same number (docs/json.md). The last four are memcheck's
 * reachability classes at exit (record --reach, docs/leaks.md): lost is
 * definitely and indirectly lost together. */
#define ANA_CHECK_MEASURES(X)                                                                      \
    X(ANA_CHECK_LEAKED, "leaked", "leaked_bytes", true)                                            \
    X(ANA_CHECK_LEAKED_BLOCKS, "leaked-blocks", "leaked_blocks", false)                            \
    X(ANA_CHECK_PEAK, "peak", "peak_bytes", true)                                                  \
    X(ANA_CHECK_TEMPORARY, "temporary", "temporary", false)                                        \
    X(ANA_CHECK_ALLOCATIONS, "allocations", "allocations", false)                                  \
    X(ANA_CHECK_PEAK_RSS, "peak-rss", "peak_rss_bytes", true)                                      \
    X(ANA_CHECK_DEFINITELY_LOST, "definitely-lost", "definitely_lost_bytes", true)                 \
    X(ANA_CHECK_LOST, "lost", "lost_bytes", true)                                                  \
    X(ANA_CHECK_LOST_BLOCKS, "lost-blocks", "lost_blocks", false)                                  \
    X(ANA_CHECK_POSSIBLY_LOST, "possibly-lost", "possibly_lost_bytes", true)

#define ANA_CHECK_ENUM(id, name, key, bytes) id,
enum ana_check_measure { ANA_CHECK_MEASURES(ANA_CHECK_ENUM) ANA_CHECK_NR_MEASURES };
#undef ANA_CHECK_ENUM

/* The option's word ("leaked-blocks"), the JSON key ("leaked_blocks"),
 * whether the number is bytes (limits take 64K, 2M). */
const char *ana_check_measure_name(enum ana_check_measure m);
const char *ana_check_measure_key(enum ana_check_measure m);
bool ana_check_measure_bytes(enum ana_check_measure m);
/* The measure named by the first len bytes of name, or -EINVAL. */
int ana_check_measure_parse(const char *name, size_t len);

/* One run's numbers. known[m] is false where the trace cannot tell (no
 * RSS sample; temporary allocations of a sampled trace). */
struct ana_check_values {
    uint64_t v[ANA_CHECK_NR_MEASURES];
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
