/* SPDX-License-Identifier: MIT */
/* One pass of the address-space model, read off at the requested moments:
 * a point at t sees the events before t, as timeline's rows do. */
#include "analysis/vm/ana_vm_series.h"

#include "analysis/core/ana_scan.h"
#include "analysis/vm/ana_vm.h"

struct series {
    struct ana_vm vm;
    struct ana_vm_point *pts;
    size_t n, next;
};

static void fill_upto(struct series *s, uint64_t ts)
{
    for (; s->next < s->n && s->pts[s->next].t_ns <= ts; s->next++) {
        struct ana_vm_point *p = &s->pts[s->next];
        const struct ana_vm_image *im = ana_vm_get(&s->vm, p->image);

        p->mapped = im ? im->mapped : 0;
        p->reserved = im ? im->reserved : 0;
        p->committed = im ? im->committed : 0;
        p->charge = im ? im->charge : 0;
    }
}

static int on_event(void *arg, const struct fmt_event *ev)
{
    struct series *s = arg;

    fill_upto(s, ev->ts_ns);
    if (s->next == s->n)
        return 1; /* every point is filled: stop reading */
    return ana_vm_event(&s->vm, ev);
}

int ana_vm_series(struct fmt_reader *r, struct ana_vm_point *pts, size_t n)
{
    struct ana_scan_options o;
    struct series s = {.pts = pts, .n = n};
    int rc;

    ana_vm_init(&s.vm, NULL, NULL);
    ana_scan_options_init(&o);
    rc = ana_scan(r, &o, on_event, &s);
    if (rc >= 0) {
        fill_upto(&s, UINT64_MAX);
        rc = 0;
    }
    ana_vm_release(&s.vm);
    return rc;
}
