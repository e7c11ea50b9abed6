/* SPDX-License-Identifier: MIT */
/* The writer's pools: ids of the program's own pools and their live
 * blocks (docs/format-events.md, "Pools"). */
#include "format/fmt_wpool_internal.h"

#include <errno.h>
#include <stdlib.h>

int fmt_wpool_init(struct fmt_wpool *p, uint32_t time_unit_ns)
{
    int rc = fmt_wlive_init(&p->blocks, time_unit_ns);

    if (rc)
        return rc;
    if ((rc = fmt_wlive_init(&p->ids, 1)))
        fmt_wlive_destroy(&p->blocks);
    p->nr_ids = 0;
    return rc;
}

void fmt_wpool_destroy(struct fmt_wpool *p)
{
    fmt_wlive_destroy(&p->blocks);
    fmt_wlive_destroy(&p->ids);
}

int fmt_wpool_id(struct fmt_wpool *p, uint32_t image, uint64_t handle, uint32_t *id, int *created)
{
    struct fmt_wblock b;

    *created = !fmt_wlive_get(&p->ids, image, handle, &b);
    if (!*created) {
        *id = (uint32_t)b.serial;
        return 0;
    }
    if (p->nr_ids == UINT32_MAX)
        return -ENOMEM;
    struct fmt_wblock n = {.addr = handle, .serial = ++p->nr_ids, .image = image};
    *id = p->nr_ids;
    return fmt_wlive_insert(&p->ids, &n);
}

static int by_serial(const void *a, const void *b)
{
    const struct fmt_wblock *x = a, *y = b;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

int fmt_wpool_blocks(struct fmt_wpool *p, uint32_t id, struct fmt_wblock **out, uint64_t *nr)
{
    struct fmt_wblock b;
    uint64_t n = 0, pos = 0;

    *out = NULL;
    *nr = 0;
    while (fmt_wlive_next(&p->blocks, &pos, &b))
        n += b.image == id;
    if (!n)
        return 0;
    struct fmt_wblock *v = calloc(n, sizeof(*v));
    if (!v)
        return -ENOMEM;
    n = 0;
    pos = 0;
    while (fmt_wlive_next(&p->blocks, &pos, &b))
        if (b.image == id)
            v[n++] = b;
    qsort(v, n, sizeof(*v), by_serial);
    *out = v;
    *nr = n;
    return 0;
}
