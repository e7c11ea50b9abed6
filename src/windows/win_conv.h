/* SPDX-License-Identifier: MIT */
/* One interim Windows record at a time as trace events (docs/windows.md,
 * "The trace"): used by win_trace (the whole file, after the run) and by
 * the Linux recorder's Wine channel (records as they arrive). Records of a
 * process must come in its seq order. */
#ifndef WIN_CONV_H
#define WIN_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"
#include "win_rec.h"

struct win_conv;

/* Where the events go: stack interns a stack of image (as
 * fmt_writer_stack), event takes one event (its ts_ns the record's time). */
struct win_conv_sink {
    void *ctx;
    int (*stack)(void *ctx, uint32_t image, const uint64_t *frames, uint32_t nr_frames,
                 uint32_t *id);
    int (*event)(void *ctx, struct fmt_event *ev);
};

struct win_conv_stats {
    size_t events;        /* handed to the sink */
    size_t nested;        /* heap calls inside heap calls, left out */
    size_t destroy_frees; /* blocks ended by their heap's destruction */
};

/* Returns NULL when out of memory. */
struct win_conv *win_conv_new(const struct win_conv_sink *sink);
/* Convert r, of time ts (ns). For a WIN_REC_PROCESS record, ppid is its
 * parent (0: the launcher's) and exe/exe_len the program's path. Returns 0
 * or a negative errno (a sink's, or -ENOMEM). */
int win_conv_record(struct win_conv *c, const struct win_rec *r, uint64_t ts, uint32_t ppid,
                    const char *exe, size_t exe_len);
void win_conv_stats(const struct win_conv *c, struct win_conv_stats *st);
void win_conv_free(struct win_conv *c);

#endif
