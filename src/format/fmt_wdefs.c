/* SPDX-License-Identifier: MIT */
/* The writer's definitions: DEFS records that life-cycle events add
 * (images, thread names, modules) and the table of loaded modules through
 * which an unload finds its module's id. */
#include <errno.h>
#include <stdlib.h>

#include "format/fmt_writer_internal.h"
#include "util/util_array.h"

/* Append a DEFS record whose body is built in a small buffer. */
int fmt_wdefs_add(struct fmt_writer *w, unsigned type, const struct fmt_buf *body)
{
    int rc = fmt_buf_add_varint(&w->defs, type);

    return rc ?: fmt_buf_add_string(&w->defs, body->data, body->len);
}

static int def_module(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx, uint32_t *id)
{
    const struct fmt_module *m = ev->module;
    struct fmt_buf b = {0};
    int rc;

    if (!m || m->nr_segments > FMT_MAX_SEGMENTS || m->build_id_len > FMT_MAX_BUILD_ID ||
        m->path_len > FMT_MAX_STRING)
        return -EINVAL;
    if (UTIL_ARRAY_RESERVE(w->mods, w->cap_mods, (size_t)w->nr_mods + 1, 64))
        return -ENOMEM;
    w->mods[w->nr_mods] = (struct fmt_wmod){m->base, ev->image, 0};
    *id = ++w->nr_mods;
    rc = fmt_buf_reserve(&b, 8 * FMT_VARINT_MAX + m->path_len + m->build_id_len +
                                 m->nr_segments * 4 * FMT_VARINT_MAX);
    if (rc)
        return rc;
    fmt_buf_put_varint(&b, *id);
    fmt_buf_put_varint(&b, ev->image);
    fmt_buf_put_varint(&b, ctx);
    fmt_buf_put_varint(&b, ev->ts_ns);
    fmt_buf_put_varint(&b, m->base);
    fmt_buf_put_varint(&b, m->path ? m->path_len : 0);
    fmt_buf_put_bytes(&b, m->path, m->path ? m->path_len : 0);
    fmt_buf_put_varint(&b, m->build_id_len);
    fmt_buf_put_bytes(&b, m->build_id, m->build_id_len);
    fmt_buf_put_varint(&b, m->nr_segments);
    for (uint32_t i = 0; i < m->nr_segments; i++) {
        fmt_buf_put_varint(&b, m->segments[i].vaddr);
        fmt_buf_put_varint(&b, m->segments[i].memsz);
        fmt_buf_put_varint(&b, m->segments[i].offset);
        fmt_buf_put_varint(&b, m->segments[i].flags);
    }
    rc = fmt_wdefs_add(w, FMT_DEF_MODULE, &b);
    fmt_buf_free(&b);
    return rc;
}

int fmt_wdefs_pool(struct fmt_writer *w, uint32_t image, uint64_t handle, uint64_t ts_ns,
                   const char *name, uint32_t name_len)
{
    struct fmt_buf b = {0};
    int rc = fmt_buf_reserve(&b, 4 * FMT_VARINT_MAX + name_len);

    if (rc)
        return rc;
    fmt_buf_put_varint(&b, image);
    fmt_buf_put_varint(&b, handle);
    fmt_buf_put_varint(&b, ts_ns);
    fmt_buf_put_varint(&b, name_len);
    fmt_buf_put_bytes(&b, name, name_len);
    rc = fmt_wdefs_add(w, FMT_DEF_POOL, &b);
    fmt_buf_free(&b);
    return rc;
}

int fmt_wdefs_aggregate(struct fmt_writer *w, const struct fmt_event *ev)
{
    uint8_t tmp[2 * FMT_VARINT_MAX];
    struct fmt_buf b = {tmp, 0, sizeof(tmp)};

    fmt_buf_put_varint(&b, ev->ts_ns); /* rounded to the time unit already */
    fmt_buf_put_varint(&b, ev->arg[0]);
    return fmt_wdefs_add(w, FMT_DEF_AGGREGATE, &b);
}

/* Definitions that life-cycle events add (images, thread names, modules),
 * and the module id their MISC carries. */
int fmt_wdefs_life(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx)
{
    uint8_t small[8 * FMT_VARINT_MAX];
    struct fmt_buf b = {small, 0, sizeof(small)};
    struct fmt_buf *misc = &w->col[FMT_COL_MISC];
    uint32_t id = 0;
    int rc;

    switch (ev->kind) {
    case FMT_EV_PROCESS_START: {
        struct fmt_buf big = {0};
        rc = fmt_buf_reserve(&big, 8 * FMT_VARINT_MAX + ev->str_len + ev->str2_len);
        if (rc)
            return rc;
        fmt_buf_put_varint(&big, ev->image);
        fmt_buf_put_varint(&big, ev->pid);
        fmt_buf_put_varint(&big, ev->arg[0]);
        fmt_buf_put_varint(&big, ev->arg[1]);
        fmt_buf_put_varint(&big, ev->ts_ns);
        fmt_buf_put_varint(&big, ev->str ? ev->str_len : 0);
        fmt_buf_put_bytes(&big, ev->str, ev->str ? ev->str_len : 0);
        fmt_buf_put_varint(&big, ev->str2 ? ev->str2_len : 0);
        fmt_buf_put_bytes(&big, ev->str2, ev->str2 ? ev->str2_len : 0);
        rc = fmt_wdefs_add(w, FMT_DEF_IMAGE, &big);
        fmt_buf_free(&big);
        return rc;
    }
    case FMT_EV_PROCESS_EXIT:
        fmt_buf_put_varint(&b, ev->image);
        fmt_buf_put_varint(&b, ev->ts_ns);
        fmt_buf_put_varint(&b, ev->arg[0]);
        fmt_buf_put_varint(&b, ev->arg[1]);
        return fmt_wdefs_add(w, FMT_DEF_IMAGE_END, &b);
    case FMT_EV_THREAD_START:
    case FMT_EV_THREAD_NAME: {
        if (!ev->str || !ev->str_len)
            return 0;
        struct fmt_buf big = {0};
        rc = fmt_buf_reserve(&big, 3 * FMT_VARINT_MAX + ev->str_len);
        if (rc)
            return rc;
        fmt_buf_put_varint(&big, ctx);
        fmt_buf_put_varint(&big, ev->ts_ns);
        fmt_buf_put_varint(&big, ev->str_len);
        fmt_buf_put_bytes(&big, ev->str, ev->str_len);
        rc = fmt_wdefs_add(w, FMT_DEF_THREAD_NAME, &big);
        fmt_buf_free(&big);
        return rc;
    }
    case FMT_EV_HEAP_CREATE:
        /* A pool's name where every analysis finds it (format 1.4). */
        if (!(ev->flags & FMT_EVF_POOL))
            return 0;
        return fmt_wdefs_pool(w, ev->image, ev->addr, ev->ts_ns, ev->str,
                              ev->str ? ev->str_len : 0);
    case FMT_EV_THREAD_EXIT:
        fmt_buf_put_varint(&b, ctx);
        fmt_buf_put_varint(&b, ev->ts_ns);
        return fmt_wdefs_add(w, FMT_DEF_THREAD_END, &b);
    case FMT_EV_MODULE_LOAD:
        rc = def_module(w, ev, ctx, &id);
        if (rc)
            return rc;
        fmt_buf_put_varint(misc, id);
        return 0;
    case FMT_EV_MODULE_UNLOAD:
        for (uint32_t i = w->nr_mods; i-- > 0;) {
            if (!w->mods[i].gone && w->mods[i].base == ev->addr && w->mods[i].image == ev->image) {
                w->mods[i].gone = 1;
                id = i + 1;
                break;
            }
        }
        fmt_buf_put_varint(misc, id);
        if (!id)
            return 0;
        fmt_buf_put_varint(&b, id);
        fmt_buf_put_varint(&b, ev->ts_ns);
        return fmt_wdefs_add(w, FMT_DEF_MODULE_END, &b);
    }
    return 0;
}
