/* SPDX-License-Identifier: MIT */
/* What every output of a sampled trace (record --sample) says about its
 * numbers: the reader turns each recorded block into the bytes and the
 * blocks it stands for (fmt_reader_estimates), so byte figures and counts
 * are unbiased estimates, and a peak (a maximum over time of an
 * estimate) is not an unbiased estimate of the real peak. Text marks each
 * estimated figure with ANA_SAMPLE_MARK; files other tools read say it in
 * the place their format has for words (ana_sample_label). */
#ifndef ANA_SAMPLE_H
#define ANA_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

struct ana_json;

/* The mark before an estimated figure in text: "~1234". */
#define ANA_SAMPLE_MARK "~"

/* ANA_SAMPLE_MARK for a trace sampled at rate bytes, "" for an exact one
 * (rate 0), whose text stays as it was. */
const char *ana_sample_mark(uint64_t rate);

/* The note for a trace sampled at rate bytes, into buf (size bytes,
 * NUL-terminated). Returns buf. */
char *ana_sample_note(char *buf, size_t size, uint64_t rate);

/* The one line an exported file carries (massif desc, pprof comment,
 * heaptrack and folded comments, SQLite meta, SVG title): "memscribe:
 * sampled trace (record --sample RATE): figures are estimates, a peak is
 * not an unbiased estimate". Into buf as ana_sample_note; "" for rate 0. */
char *ana_sample_label(char *buf, size_t size, uint64_t rate);

/* The "sampled" member of a JSON object: {"sample_bytes": rate,
 * "bytes": "estimate", "counts": "estimate", "peak_unbiased": false}.
 * Writes nothing for an exact trace (rate 0), whose output stays as it
 * was. */
void ana_sample_json(struct ana_json *j, uint64_t rate);

#endif
