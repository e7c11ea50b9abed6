/* SPDX-License-Identifier: MIT */
/* What every output of a sampled trace (record --sample) says about its
 * numbers: the reader turns each recorded block into the bytes and the
 * blocks it stands for (fmt_reader_estimates), so byte figures and counts
 * are unbiased estimates, and a peak (a maximum over time of an
 * estimate) is not an unbiased estimate of the real peak. Text marks each
 * estimated figure with ANA_SAMPLE_MARK; files other tools read say it in
 * the place their format has for words (ana_sample_label).
 *
 * Temporary allocations are left out. A block is temporary when its thread
 * allocates and frees nothing else before freeing it; a sampled trace sees
 * only the sampled calls in between, so blocks look temporary far more
 * often than they are (git log -p at 512K: 146k-169k against 62,681
 * exact), and no reweighting mends that. So wherever a temporary figure
 * stands, a sampled trace has none (ana_sample_has_temporary): report's
 * line says "not estimated", table cells are empty in text and CSV and
 * null in JSON (ana_table_set_none), JSON totals null, its "by temporary"
 * list is not made (JSON null), tree and diff columns are empty or null,
 * and what would draw or rank by it (flamegraph, export --to folded --cost
 * temporary, --sort temporary, --temporary-threshold) is refused; the HTML
 * page has no temporary card, column or flame cost; SQLite's temporary is
 * NULL; a heaptrack file shows no block temporary (heaptrack_print counts
 * them from the order of its lines, and reads 0). Labels and notes say so. */
#ifndef ANA_SAMPLE_H
#define ANA_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

struct ana_json;

/* The mark before an estimated figure in text: "~1234". */
#define ANA_SAMPLE_MARK "~"

/* What text says where a sampled trace's temporary figure would stand,
 * and why a command refuses to draw or rank by them. */
#define ANA_SAMPLE_NO_TEMPORARY "not estimated in a sampled trace"
#define ANA_SAMPLE_NO_TEMPORARY_WHY                                                                \
    "a sampled trace's temporary allocations are not estimated (docs/record-sampling.md)"

/* Whether a trace sampled at rate bytes (0: exact) has temporary figures
 * (see above): an exact one, or one of --sample 1, which records every
 * block and every call with it. */
static inline int ana_sample_has_temporary(uint64_t rate)
{
    return rate <= 1;
}

/* ANA_SAMPLE_MARK for a trace sampled at rate bytes, "" for an exact one
 * (rate 0), whose text stays as it was. */
const char *ana_sample_mark(uint64_t rate);

/* The note for a trace sampled at rate bytes, into buf (size bytes,
 * NUL-terminated). Returns buf. */
char *ana_sample_note(char *buf, size_t size, uint64_t rate);
/* The note for a sampled trace with exact counters (format 1.13): which
 * figures are counted and which estimated. As ana_sample_note. */
char *ana_sample_note_counted(char *buf, size_t size, uint64_t rate);

/* The one line an exported file carries (massif desc, pprof comment,
 * heaptrack and folded comments, SQLite meta, SVG title): "memscribe:
 * sampled trace (record --sample RATE): figures are estimates, a peak is
 * not an unbiased estimate, temporary allocations are not estimated" (the
 * last words unless ana_sample_has_temporary). Into buf as
 * ana_sample_note; "" for rate 0. */
char *ana_sample_label(char *buf, size_t size, uint64_t rate);
/* A buffer that holds any label. */
#define ANA_SAMPLE_LABEL_SIZE 256

/* The "sampled" member of a JSON object: {"sample_bytes": rate,
 * "bytes": "estimate", "counts": "estimate", "peak_unbiased": false,
 * "temporary": "not estimated"} (the last one unless
 * ana_sample_has_temporary).
 * Writes nothing for an exact trace (rate 0), whose output stays as it
 * was. */
void ana_sample_json(struct ana_json *j, uint64_t rate);

#endif
