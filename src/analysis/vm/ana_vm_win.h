/* SPDX-License-Identifier: MIT */
/* Windows virtual memory (format 1.2) in the terms of the mapping model
 * (ana_vm): a reservation is a mapping without access, a commit gives its
 * pages the PAGE_* protection as PROT_* (PAGE_NOACCESS as
 * ANA_VM_PROT_COMMITTED: committed, no access), a decommit takes it away,
 * a release unmaps; a view of a section is a shared mapping. So reserved
 * vs committed, commit lifetimes and fragmentation come out of the same
 * code for both systems. docs/windows.md. */
#ifndef ANA_VM_WIN_H
#define ANA_VM_WIN_H

#include "memscribe/event.h"

/* A piece's prot for pages committed without access (Windows PAGE_NOACCESS,
 * docs/windows.md): not PROT_NONE, so they count as committed, and no
 * PROT_* bit, so they are no commit charge. */
#define ANA_VM_PROT_COMMITTED 0x80000000u

/* PROT_* for a PAGE_* protection (its modifiers, PAGE_GUARD and the like,
 * left out). PAGE_NOACCESS is PROT_NONE. */
unsigned ana_vm_win_prot(uint64_t page);

/* The Linux event of the same meaning for a Windows VM kind, in *out.
 * Returns 1, or 0 for an event that changes no mapping (a failed call). */
int ana_vm_win_event(const struct fmt_event *ev, struct fmt_event *out);

#endif
