/* SPDX-License-Identifier: MIT */
/* The one replay of the address space (see ana_vm_replay.h). */
#include "analysis/vm/ana_vm_replay.h"

static const struct ana_vm_replay_ops no_ops;

static int on_lifetime(void *arg, const struct ana_vm_lifetime *l)
{
    struct ana_vm_replay *p = arg;

    return p->ops->lifetime(p->arg, l);
}

void ana_vm_replay_init(struct ana_vm_replay *p, const struct ana_vm_replay_ops *ops, void *arg)
{
    p->ops = ops ? ops : &no_ops;
    p->arg = arg;
    p->precise = false;
    ana_ticks_init(&p->ticks, p->t0, p->t1, p->nr_intervals);
    ana_vm_init(&p->vm, p->ops->lifetime ? on_lifetime : NULL, p);
}

bool ana_vm_replay_selects(const struct ana_vm_replay *p, uint32_t image)
{
    if (ana_filter_is_empty(p->filter))
        return true;
    /* The images' states grow by doubling: one past the trace's is none. */
    const struct fmt_image_info *ii = fmt_reader_image(p->r, image);
    return ii && ana_filter_image(p->filter, image, ii->pid);
}

/* Every moment before upto, for each selected image with a state. */
int ana_vm_replay_moments(struct ana_vm_replay *p, uint64_t upto)
{
    uint64_t b;
    int rc;

    if (!p->ops->moment)
        return 0;
    for (; ana_ticks_due(&p->ticks, upto, &b); ana_ticks_taken(&p->ticks))
        for (uint32_t i = 0; i < p->vm.nr_images; i++)
            if (ana_vm_replay_selects(p, i) &&
                (rc = p->ops->moment(p->arg, b, i, &p->vm.images[i])))
                return rc;
    return 0;
}

int ana_vm_replay_event(void *arg, const struct fmt_event *ev)
{
    return ana_vm_replay_event_inline(arg, ev);
}

int ana_vm_replay_finish(struct ana_vm_replay *p)
{
    int rc = ana_vm_replay_moments(p, UINT64_MAX);

    return rc ? rc : ana_vm_finish(&p->vm);
}

void ana_vm_replay_release(struct ana_vm_replay *p)
{
    ana_vm_release(&p->vm);
}
