/* SPDX-License-Identifier: MIT */
/* The SQLite export's Windows tables (docs/export-tables.md, "Windows traces"):
 * every virtual-memory call with its MEM_* and PAGE_* values (vm_calls),
 * the heaps by handle (heaps) and the heap of each block (heap_blocks).
 * Made only for a Windows trace, so a Linux trace's database is as before. */
#ifndef ANA_EXPORT_SQLITE_WIN_H
#define ANA_EXPORT_SQLITE_WIN_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

struct ana_sqw;

/* stack_row makes sure the stacks row of id exists (0 or -errno). */
struct ana_sqw_host {
    void *ctx;
    int (*stack_row)(void *ctx, uint32_t id);
};

/* Create the tables in db (inside the caller's transaction) and prepare
 * the statements. Returns 0, or -EIO/-ENOMEM with a message in err. */
int ana_sqw_open(struct ana_sqw **out, sqlite3 *db, const struct ana_sqw_host *host, char *err,
                 size_t err_size);
/* Take one event: heap block starts (their heap handle), heap creations
 * and destructions, the Windows VM kinds; others are ignored. 0 or -errno. */
int ana_sqw_event(struct ana_sqw *w, const struct fmt_event *ev);
void ana_sqw_close(struct ana_sqw *w);

#endif
