/* SPDX-License-Identifier: MIT */
/* Which collector a program needs: the i386 build for 32-bit ELF files. */
#ifndef REC_CLASS_H
#define REC_CLASS_H

#include <stddef.h>

/* The x86-64 libmemscribe.so: MEMSCRIBE_COLLECTOR, else
 * <dir of memscribe>/../lib/memscribe/libmemscribe.so, with links resolved
 * (malloc'd). NULL with the reason in msg if there is none. */
char *rec_collector_path(char *msg, size_t msg_size);

/* collector is the x86-64 libmemscribe.so (malloc'd). For a 32-bit ELF
 * program, returns <dir of collector>/i386/libmemscribe.so if it exists
 * (and frees collector); otherwise returns collector unchanged. A script
 * is judged by its interpreter (#!). Never fails: an unreadable program is
 * left to the loader. */
char *rec_collector_for(char *collector, const char *prog);

/* The names ld.so may give $PLATFORM ("x86_64:haswell:...", ':'-separated):
 * with a symlink by each of them beside collector (the build and the install
 * make them), rec_collector_for returns <dir>/$PLATFORM/libmemscribe.so for
 * any program, so one that execs a program of the other class is traced. */
const char *rec_platform_names(void);

#endif
