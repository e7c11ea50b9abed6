/* SPDX-License-Identifier: MIT */
/* Mapped, reserved, committed and commit-charge bytes of each image at
 * given moments, by one more pass over the trace (for timeline's committed
 * column next to heap in use and RSS). */
#ifndef ANA_VM_SERIES_H
#define ANA_VM_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "memscribe/trace.h"

struct ana_vm_point {
    uint64_t t_ns;                                /* in: the moment (events before it count) */
    uint32_t image;                               /* in */
    uint64_t mapped, reserved, committed, charge; /* out */
};

/* Fill every point; points must be in time order. Returns 0 or -errno
 * (the reader's message is then in fmt_reader_error()). */
int ana_vm_series(struct fmt_reader *r, struct ana_vm_point *pts, size_t n);

#endif
