/* SPDX-License-Identifier: MIT */
/* What `memscribe record -p PID` adds to record (cli_attach.c): its
 * options' values and the settings the attached collector is handed. */
#ifndef CLI_ATTACH_H
#define CLI_ATTACH_H

#include <stdint.h>

/* The attach build beside the collector: <dir>/libmemscribe-attach.so,
 * or <dir>/i386/libmemscribe-attach.so for a 32-bit program (malloc'd;
 * dies, naming pid, if it is missing). */
char *cli_attach_lib(const char *collector, int pid, int is32);
/* The settings memscribe_attach_start() takes, "NAME=value\n" lines: the
 * socket, secret, depth, clock, sampling rate, and the collector's own
 * variables of our environment (MEMSCRIBE_UNWIND, ...). malloc'd. */
char *cli_attach_settings(const char *sock, const char *secret, uint32_t depth, int tsc,
                          uint64_t sample_bytes);

#endif
