/* SPDX-License-Identifier: MIT */
/* Two runs compared call site by call site (memscribe diff). A site is
 * named by a key the caller builds from its symbolized frames (the
 * function chain, or function, file and line), never by addresses, which
 * change between builds and runs. Sites of one side that share a key are
 * added up; rows pair the sides' sites by key. Memory grows with the
 * sites, never with events. */
#ifndef ANA_DIFF_H
#define ANA_DIFF_H

#include <stddef.h>
#include <stdint.h>

enum ana_diff_metric {
    ANA_DIFF_ALLOCS = 0, /* heap blocks allocated */
    ANA_DIFF_BYTES,      /* their requested bytes */
    ANA_DIFF_PEAK,       /* live bytes at the peak of heap in use */
    ANA_DIFF_LEAKED,     /* live bytes at the end */
    ANA_DIFF_TEMPORARY,  /* temporary allocations (docs/architecture.md, Meanings) */
    ANA_DIFF_LOST,       /* live bytes at exit lost, definitely or indirectly (record --reach's
                            classes, docs/leaks.md); 0 where a side has none */
    /* diff shows and sorts by the six above (ANA_DIFF_NR_SHOWN); check's
     * --max-growth also lists the sites that grew in these. */
    ANA_DIFF_LEAKED_BLOCKS, /* blocks live at the end */
    ANA_DIFF_DEFINITE,      /* bytes definitely lost at exit (classes, as LOST) */
    ANA_DIFF_LOST_BLOCKS,   /* blocks definitely or indirectly lost at exit */
    ANA_DIFF_POSSIBLE,      /* bytes possibly lost at exit */
    ANA_DIFF_NR_METRICS,
};

#define ANA_DIFF_NR_SHOWN (ANA_DIFF_LOST + 1)

enum ana_diff_side { ANA_DIFF_BASE = 0, ANA_DIFF_NEW = 1 };

struct ana_diff_row {
    char *key;                          /* NUL-terminated */
    uint64_t v[2][ANA_DIFF_NR_METRICS]; /* by side, by metric */
};

struct ana_diff {
    struct ana_diff_row *rows;
    size_t nr_rows, cap;
    int finished;
    uint64_t total[2][ANA_DIFF_NR_METRICS];
};

void ana_diff_init(struct ana_diff *d);
void ana_diff_release(struct ana_diff *d);

/* Add one site's numbers to a side (the key is copied). Returns 0 or
 * -ENOMEM; -EINVAL after ana_diff_finish(). */
int ana_diff_add(struct ana_diff *d, enum ana_diff_side side, const char *key,
                 const uint64_t v[ANA_DIFF_NR_METRICS]);

/* Pair the sites by key: afterwards each key has one row. */
void ana_diff_finish(struct ana_diff *d);

/* new - base of one metric of a row. */
int64_t ana_diff_change(const struct ana_diff_row *r, enum ana_diff_metric m);

/* Order rows by the size of metric m's change, largest first (growth
 * before an equal shrink), then by key. After ana_diff_finish(). */
void ana_diff_sort(struct ana_diff *d, enum ana_diff_metric m);

/* "allocations", "bytes", "peak", "leaked", "temporary", "lost": --sort's
 * words (then check's: "leaked-blocks", "definitely-lost", "lost-blocks",
 * "possibly-lost"). */
const char *ana_diff_metric_name(enum ana_diff_metric m);
/* The metric's JSON and CSV key, report's for the same number
 * (docs/json.md): "allocations", "allocated_bytes", "peak_bytes",
 * "leaked_bytes", "temporary", "lost_bytes" (then "leaked_blocks",
 * "definitely_lost_bytes", "lost_blocks", "possibly_lost_bytes"). */
const char *ana_diff_metric_key(enum ana_diff_metric m);
/* The metric of a name among the first ANA_DIFF_NR_SHOWN (diff's --sort),
 * or -EINVAL. */
int ana_diff_metric_parse(const char *name);

#endif
