/* SPDX-License-Identifier: MIT */
/* A byte count as people write it on a command line: 4096, 64K, 512k, 2M, 1G. */
#ifndef UTIL_SIZE_H
#define UTIL_SIZE_H

#include <stdint.h>

/* Parse s (digits, then at most one of K, M, G in either case: KiB, MiB,
 * GiB) into *out. Returns 0, or -1 for anything else, zero, or a value
 * that does not fit 64 bits. */
int util_size_parse(const char *s, uint64_t *out);

#endif
