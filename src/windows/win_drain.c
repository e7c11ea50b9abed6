/* SPDX-License-Identifier: MIT */
/* The launcher's side of the shared segments (docs/windows.md, Transport). */
#include "win_launch_internal.h"

long win_drain(struct win_proc *p, FILE *out)
{
    struct win_shm_head *h = p->shm;
    uint8_t *segs = (uint8_t *)h + WIN_SHM_HEAD_SIZE;
    const uint32_t room = WIN_SHM_SEG_SIZE - sizeof(struct win_seg_head);
    long total = 0;

    for (uint32_t i = 0; i < WIN_SHM_NR_SEGS; i++) {
        struct win_seg_head *s = (struct win_seg_head *)(segs + (size_t)i * WIN_SHM_SEG_SIZE);
        uint32_t state = s->state;
        MemoryBarrier(); /* state before committed: FULL means committed is final */
        uint32_t committed = s->committed, drained = s->drained;

        if (committed > room || drained > committed)
            return -1; /* the program wrote over its segment heads */
        if (committed > drained) {
            if (fwrite((uint8_t *)(s + 1) + drained, 1, committed - drained, out) !=
                committed - drained)
                return -1;
            total += (long)(committed - drained);
            s->drained = committed;
        }
        if (state == WIN_SEG_FULL) {
            s->committed = 0;
            s->drained = 0;
            MemoryBarrier();
            s->state = WIN_SEG_FREE;
        }
    }
    return total;
}
