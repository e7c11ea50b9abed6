/* SPDX-License-Identifier: MIT */
/* Times on the command line and in output. A point in a trace is a
 * duration from the start (util_duration.h), or `start`, `peak` or `end`,
 * optionally moved by a duration: `peak-50ms`, `end-1s`. */
#ifndef ANA_TIME_H
#define ANA_TIME_H

#include <stddef.h>
#include <stdint.h>

enum ana_time_base {
    ANA_TIME_ABS = 0, /* from the trace start: offset_ns is the time */
    ANA_TIME_START,
    ANA_TIME_PEAK, /* when heap in use reached its maximum */
    ANA_TIME_END,  /* the last event */
};

struct ana_time_point {
    enum ana_time_base base;
    int64_t offset_ns;
};

/* Parse a point. Returns 0 or -EINVAL / -ERANGE. */
int ana_time_parse_point(const char *s, struct ana_time_point *p);

/* The point as a time from the trace start, clamped to [0, end_ns]. */
uint64_t ana_time_resolve(const struct ana_time_point *p, uint64_t peak_ns, uint64_t end_ns);

/* "1.503200s": seconds with six decimals (microseconds), for text output.
 * Returns buf. */
char *ana_time_format(uint64_t ns, char *buf, size_t size);

/* "9.54 MiB", "512 B": bytes for a human, next to the exact number.
 * Returns buf. */
char *ana_bytes_format(uint64_t bytes, char *buf, size_t size);

#endif
