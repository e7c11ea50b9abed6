/* SPDX-License-Identifier: MIT */
/* What every output of a trace recorded by `record -p PID` says: it starts
 * mid-run, so the blocks allocated before the attach are not in it, their
 * frees are (as frees of unknown blocks), and what it calls leaked is
 * what was live when it ended, of the blocks it saw allocated. */
#ifndef ANA_ATTACH_H
#define ANA_ATTACH_H

#include <stddef.h>
#include <stdint.h>

struct ana_json;

/* The note for a trace attached to pid, into buf (size bytes,
 * NUL-terminated). Returns buf. */
char *ana_attach_note(char *buf, size_t size, uint32_t pid);

/* The "attached" member of a JSON object: {"pid": pid, "starts":
 * "mid-run", "unmatched_frees": "allocated before the attach"}. Writes
 * nothing for a trace recorded from the start (pid 0). */
void ana_attach_json(struct ana_json *j, uint32_t pid);

#endif
