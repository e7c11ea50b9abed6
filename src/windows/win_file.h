/* SPDX-License-Identifier: MIT */
/* Reading the launcher's interim event file (docs/windows-internals.md, "Interim
 * records") on the host: checked records in each process's order, and the
 * launcher's clock. Shared by win_dump and win_trace. */
#ifndef WIN_FILE_H
#define WIN_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "win_rec.h"

struct win_file {
    uint8_t *buf;
    size_t len;
    const struct win_rec **recs; /* by pid, then seq */
    size_t nr;
    double ns_per_tick; /* from the CLOCK record; 0 without one */
    uint64_t tsc_zero;
    uint64_t mtime_ns; /* the file's modification time (CLOCK_REALTIME) */
};

/* Load and check path. Returns 0, or -1 with a message "PATH: problem" in
 * err. */
int win_file_load(struct win_file *f, const char *path, char *err, size_t err_size);
/* The same from a file open for reading in binary mode (closed here);
 * name is for messages. */
int win_file_read(struct win_file *f, FILE *in, const char *name, char *err, size_t err_size);

void win_file_release(struct win_file *f);

/* 1 if r's head is sound (size, kind, frames within its size); its size
 * bytes must be there to read. */
int win_rec_valid(const struct win_rec *r);

/* Time of a record since the launcher started the program (0 without a
 * clock). */
uint64_t win_file_ns(const struct win_file *f, const struct win_rec *r);

/* A record's return addresses and, for WIN_REC_MODULE, its path and PDB
 * name (empty strings when absent). */
static inline const uint64_t *win_rec_frames(const struct win_rec *r)
{
    return (const uint64_t *)(r + 1);
}
void win_rec_module_text(const struct win_rec *r, const char **path, size_t *path_len,
                         const char **pdb, size_t *pdb_len);

#endif
