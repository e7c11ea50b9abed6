/* SPDX-License-Identifier: MIT */
/* Processes that ended, let go a lag later (see ana_ended.h). */
#include "analysis/core/ana_ended.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_array.h"

void ana_ended_release(struct ana_ended *q)
{
    free(q->v);
    memset(q, 0, sizeof(*q));
}

int ana_ended_push(struct ana_ended *q, uint32_t image, uint64_t end_ns)
{
    if (UTIL_ARRAY_RESERVE(q->v, q->cap, q->nr + 1, 64))
        return -ENOMEM;
    q->v[q->nr++] = (struct ana_ended_image){image, end_ns};
    return 0;
}

bool ana_ended_due(struct ana_ended *q, uint64_t now_ns, uint32_t *image, uint64_t *end_ns)
{
    /* The part taken out goes when it is all of it or a good share:
     * pushes then reuse the front, at a cost per image that stays O(1). */
    if (q->first && (q->first == q->nr || q->first >= 64)) {
        q->nr -= q->first;
        memmove(q->v, q->v + q->first, q->nr * sizeof(*q->v));
        q->first = 0;
    }
    if (q->first == q->nr ||
        (now_ns != UINT64_MAX && q->v[q->first].end_ns + ANA_ENDED_LAG_NS >= now_ns))
        return false;
    *image = q->v[q->first].image;
    *end_ns = q->v[q->first].end_ns;
    q->first++;
    return true;
}
