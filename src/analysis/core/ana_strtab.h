/* SPDX-License-Identifier: MIT */
/* String interning: each distinct string gets the next id, from 0, and
 * keeps it. The one interner of the analysis: frame strings of reports
 * (ana_stacks), the exporters' string tables (pprof, heaptrack, DHAT,
 * SQLite, massif). */
#ifndef ANA_STRTAB_H
#define ANA_STRTAB_H

#include <stdint.h>

/* Zero-initialised is empty. strs[id] is the string of id (nr of them). */
struct ana_strtab {
    char **strs;
    uint32_t nr;
    uint32_t cap;
    uint32_t *slots; /* id + 1; 0 = empty */
    uint32_t mask;
};

/* Sets *id and returns 1 if s is new, 0 if it was there, -ENOMEM. */
int ana_strtab_intern(struct ana_strtab *t, const char *s, uint32_t *id);
void ana_strtab_release(struct ana_strtab *t);

#endif
