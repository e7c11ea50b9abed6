/* SPDX-License-Identifier: MIT */
/* A sampled recording's exact counters into the trace (docs/protocol.md,
 * "Counters"): each round, every open image's counters (fmt_shm_counters.h:
 * its threads' slots added up, its heap and peak) that changed since they
 * were last written become FMT_EV_COUNTER events, at most every
 * REC_COUNTER_PERIOD_NS, and once more at the image's end. */
#ifndef REC_COUNTERS_H
#define REC_COUNTERS_H

#include <stdint.h>

#include "memscribe/event.h"

#define REC_COUNTER_PERIOD_NS (5 * 1000 * 1000ull)

struct rec_session;
struct rec_image;

void rec_counters_round(struct rec_session *s, uint64_t now_ns);
/* img's counters now into v; 0 if it has none (not sampled, no segment 0,
 * an attach). */
int rec_counters_read(const struct rec_session *s, const struct rec_image *img,
                      uint64_t v[FMT_CTR_ALL]);
/* Those of v that changed since img's last, as events at ts. */
void rec_counters_write(struct rec_session *s, struct rec_image *img, const uint64_t v[FMT_CTR_ALL],
                        uint64_t ts);

#endif
