/* SPDX-License-Identifier: MIT */
/* The Wine channel (docs/windows.md, "memscribe record on Linux"): the
 * Windows launcher, run under Wine, appends each drain round of its
 * collectors' records to a file; this reads the file as it grows, puts each
 * process's records in their seq order, and hands them in time order, as
 * trace events, to the recorder's writer (rec_merge_write). */
#ifndef REC_WIN_H
#define REC_WIN_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/rec_internal.h"

struct rec_win;

/* Read the launcher's event file open on fd (read from its start; the
 * file is not closed here); name is for messages. s: the session whose
 * writer and clock (TSC ticks: the launcher's rdtsc is the host's) are
 * used; depth: frames kept per stack. NULL when out of memory. */
struct rec_win *rec_win_new(struct rec_session *s, int fd, const char *name, uint32_t depth);
/* Take in what the file holds now and write the events older than
 * now_ns - REC_WIN_GUARD_NS; final (the launcher has ended): all of them.
 * Returns 0, or -1 with "NAME: problem" in msg (a bad record: what came
 * before it is still written, nothing after it is read). */
int rec_win_poll(struct rec_win *w, uint64_t now_ns, int final, char *msg, size_t msg_size);
void rec_win_free(struct rec_win *w);

#endif
