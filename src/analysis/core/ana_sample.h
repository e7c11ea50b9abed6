/* SPDX-License-Identifier: MIT */
/* What every output of a sampled trace (record --sample) says about its
 * numbers: the reader turns each recorded block into the bytes it stands
 * for (fmt_reader_estimates), so byte figures are unbiased estimates;
 * counts stay those of the recorded blocks, and a peak (a maximum over
 * time of an estimate) is not an unbiased estimate of the real peak. */
#ifndef ANA_SAMPLE_H
#define ANA_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

struct ana_json;

/* The note for a trace sampled at rate bytes, into buf (size bytes,
 * NUL-terminated). Returns buf. */
char *ana_sample_note(char *buf, size_t size, uint64_t rate);

/* The "sampled" member of a JSON object: {"sample_bytes": rate,
 * "bytes": "estimate", "counts": "recorded", "peak_unbiased": false}.
 * Writes nothing for an exact trace (rate 0), whose output stays as it
 * was. */
void ana_sample_json(struct ana_json *j, uint64_t rate);

#endif
