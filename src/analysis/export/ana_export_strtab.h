/* SPDX-License-Identifier: MIT */
/* String interning for the exporters' string tables (pprof, heaptrack,
 * SQLite): each distinct string gets the next index, from 0. */
#ifndef ANA_EXPORT_STRTAB_H
#define ANA_EXPORT_STRTAB_H

#include <stdint.h>

struct ana_xstrtab {
    char **strs;
    uint32_t nr;
    uint32_t cap;
    uint32_t *slots; /* index + 1; 0 = empty */
    uint32_t mask;
};

/* Sets *index and returns 1 if s is new, 0 if it was there, -ENOMEM. */
int ana_xstrtab_intern(struct ana_xstrtab *t, const char *s, uint32_t *index);
void ana_xstrtab_release(struct ana_xstrtab *t);

#endif
