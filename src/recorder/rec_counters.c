/* SPDX-License-Identifier: MIT */
/* A sampled recording's exact counters into the trace (see rec_counters.h). */
#include "recorder/rec_counters.h"

#include <stdatomic.h>

#include "format/fmt_shm.h"
#include "recorder/rec_internal.h"

int rec_counters_read(const struct rec_session *s, const struct rec_image *img,
                      uint64_t v[FMT_CTR_ALL])
{
    const struct fmt_shm_counters *c = img->ctr_area;

    if (!s->opt.sample_bytes || !c)
        return 0;
    /* The program can write the area: a slot count past the end is read
     * as all of them, and the sums are only numbers. */
    uint32_t n = atomic_load_explicit(&c->next_slot, memory_order_acquire);
    if (n >= FMT_SHM_COUNTER_SLOTS)
        n = FMT_SHM_COUNTER_SLOTS - 1;
    if (!n)
        return 0; /* no call counted yet (nor a collector that counts) */
    for (unsigned k = 0; k < FMT_CTR_NR; k++)
        v[k] = 0;
    for (uint32_t i = 0; i <= n; i++) {
        const uint64_t *slot = c->slot[i].v;
        for (unsigned k = 0; k < FMT_CTR_NR; k++)
            v[k] += __atomic_load_n(&slot[k], __ATOMIC_RELAXED);
    }
    v[FMT_CTR_HEAP_USABLE] = atomic_load_explicit(&c->heap_usable, memory_order_relaxed);
    v[FMT_CTR_PEAK_USABLE] = atomic_load_explicit(&c->peak_usable, memory_order_relaxed);
    v[FMT_CTR_UNCOUNTED] = atomic_load_explicit(&c->uncounted, memory_order_relaxed) != 0;
    return 1;
}

void rec_counters_write(struct rec_session *s, struct rec_image *img, const uint64_t v[FMT_CTR_ALL],
                        uint64_t ts)
{
    struct fmt_event ev = {0};

    ev.kind = FMT_EV_COUNTER;
    ev.image = img->index;
    ev.pid = img->pid;
    ev.tid = img->pid;
    ev.thread = img->main_thread;
    for (unsigned k = 0; k < FMT_CTR_ALL; k++) {
        if (v[k] == img->ctr_written[k])
            continue;
        ev.arg[0] = k;
        ev.size = v[k];
        rec_merge_synth(s, &ev, ts, NULL, 0, NULL, 0);
        img->ctr_written[k] = v[k];
    }
    img->ctr_ns = ts;
}

void rec_counters_round(struct rec_session *s, uint64_t now_ns)
{
    uint64_t v[FMT_CTR_ALL];

    if (!s->opt.sample_bytes)
        return;
    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];

        /* Not before its start (as an RSS sample: rec_sample_rss), nor
         * once it began to end: its close writes its last counts, dated
         * then. */
        if (!img->open || now_ns < img->start_ns || now_ns - img->ctr_ns < REC_COUNTER_PERIOD_NS ||
            (img->seg0 && atomic_load_explicit(&img->seg0->exit_ts, memory_order_relaxed)))
            continue;
        if (rec_counters_read(s, img, v))
            rec_counters_write(s, img, v, now_ns);
    }
}
