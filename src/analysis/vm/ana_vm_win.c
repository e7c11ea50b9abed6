/* SPDX-License-Identifier: MIT */
/* Windows virtual memory as mapping events (ana_vm_win.h). */
#include "analysis/vm/ana_vm_win.h"

#include <sys/mman.h>

unsigned ana_vm_win_prot(uint64_t page)
{
    switch (page & 0xff) {
    case 0x02: /* PAGE_READONLY */
        return PROT_READ;
    case 0x04: /* PAGE_READWRITE */
    case 0x08: /* PAGE_WRITECOPY */
        return PROT_READ | PROT_WRITE;
    case 0x10: /* PAGE_EXECUTE */
        return PROT_EXEC;
    case 0x20: /* PAGE_EXECUTE_READ */
        return PROT_READ | PROT_EXEC;
    case 0x40: /* PAGE_EXECUTE_READWRITE */
    case 0x80: /* PAGE_EXECUTE_WRITECOPY */
        return PROT_READ | PROT_WRITE | PROT_EXEC;
    default: /* PAGE_NOACCESS, or none */
        return PROT_NONE;
    }
}

int ana_vm_win_event(const struct fmt_event *ev, struct fmt_event *out)
{
    if (ev->flags & FMT_EVF_FAILED)
        return 0;
    *out = *ev;
    out->arg[0] = out->arg[1] = out->arg[2] = out->arg[3] = 0;
    switch (ev->kind) {
    case FMT_EV_VM_RESERVE:
        out->kind = FMT_EV_MMAP;
        out->arg[0] = PROT_NONE;
        out->arg[1] = MAP_PRIVATE | MAP_ANONYMOUS;
        out->arg[2] = (uint64_t)-1;
        return 1;
    case FMT_EV_VM_COMMIT:
    case FMT_EV_VM_PROTECT:
        /* Committed pages stay committed whatever their access: VirtualProtect
         * works only on committed pages, and PAGE_NOACCESS commits too. */
        out->kind = FMT_EV_MPROTECT;
        out->arg[0] = ana_vm_win_prot(ev->arg[0]);
        if (out->arg[0] == PROT_NONE)
            out->arg[0] = ANA_VM_PROT_COMMITTED;
        return 1;
    case FMT_EV_VM_DECOMMIT:
        out->kind = FMT_EV_MPROTECT;
        out->arg[0] = PROT_NONE;
        return 1;
    case FMT_EV_SECTION_MAP:
        out->kind = FMT_EV_MMAP;
        out->arg[0] = ana_vm_win_prot(ev->arg[0]);
        out->arg[1] = MAP_SHARED;
        out->arg[2] = (uint64_t)-1;
        return 1;
    case FMT_EV_VM_RELEASE:
    case FMT_EV_SECTION_UNMAP:
        out->kind = FMT_EV_MUNMAP;
        return out->size != 0; /* a view mapped before tracing: size unknown */
    }
    return 0;
}
