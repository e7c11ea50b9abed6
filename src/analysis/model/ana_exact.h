/* SPDX-License-Identifier: MIT */
/* A sampled trace's exact counters (format 1.13, FMT_EV_COUNTER;
 * docs/record-sampling.md, "Exact totals"), as the reports give them: of
 * one process image (its counters as last written), or of all of them
 * (the images' counters added up; the heap's peak only when one image
 * counted, since the images' own peaks need not have been at one time).
 * Exact: every call counted, none sampled. Bytes allocated and temporary
 * bytes are requested sizes; the heap in use and its peak are usable
 * bytes (what the allocator gave: a free learns its block's size so). */
#ifndef ANA_EXACT_H
#define ANA_EXACT_H

#include <stdbool.h>
#include <stdint.h>

#include "memscribe/event.h"

struct ana_model;
struct ana_scope;
struct ana_json;

struct ana_exact {
    bool present;       /* some image of the scope has counters */
    bool has_peak;      /* peak_usable is the scope's (one image counted) */
    bool uncounted;     /* an allocator's own entry points were called: left out */
    uint32_t nr_images; /* images that counted */
    uint64_t v[FMT_CTR_ALL];
    uint64_t peak_ns; /* when the peak was written (a recorder round or two after it) */
};

/* The counters of scope s of model m (an image's, or the all-images one). */
void ana_exact_of(const struct ana_model *m, const struct ana_scope *s, struct ana_exact *out);

/* The "exact" member of a scope's JSON object: null without counters,
 * else {"calls": {kind: n}, "allocations", "allocated_bytes",
 * "allocated_usable_bytes", "frees", "freed_usable_bytes", "failed_calls",
 * "temporary", "temporary_bytes", "heap_usable_bytes", "peak_usable_bytes"
 * (null for several images), "peak_usable_ns", "size_classes" [[from,
 * count]...], "uncounted"} (docs/json.md). */
void ana_exact_json(struct ana_json *j, const struct ana_exact *x);

#endif
