/* SPDX-License-Identifier: MIT */
/* From the launcher's interim event file to a memscribe trace, format 1.2
 * with the PE feature bit (docs/windows.md, "The trace"). */
#ifndef WIN_TRACE_H
#define WIN_TRACE_H

#include <stddef.h>

#include "win_file.h"

struct win_conv_stats;

/* Write f's records as a trace on fd (not closed), its chunks coded with
 * zlib if zlib, else zstd. st may be NULL. Returns 0 or -errno (the
 * message in err). */
int win_trace_write(const struct win_file *f, int fd, struct win_conv_stats *st, int zlib,
                    char *err, size_t err_size);

#endif
