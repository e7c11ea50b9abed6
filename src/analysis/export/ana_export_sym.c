/* SPDX-License-Identifier: MIT */
/* Symbolized stacks for the exporters: one symbolizer fed with every
 * module of the trace, and short frame names for formats that want one
 * word per frame. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"

int ana_xsym_open(struct ana_xsym *x, struct fmt_reader *r, const struct ana_export_options *o)
{
    int rc;

    memset(x, 0, sizeof(*x));
    x->r = r;
    x->o = o;
    if ((rc = ana_sym_create(&x->sym, &o->sym)))
        return rc;
    /* Modules in load order: one loaded later over the same range wins,
     * which is what a stack recorded after the reload needs. */
    for (uint32_t i = 0; i < fmt_reader_nr_modules(r); i++) {
        const struct fmt_module_info *mi = fmt_reader_module(r, i);

        rc = ana_sym_add_module(x->sym, mi->image, &mi->m);
        if (rc == -ENOMEM) {
            ana_xsym_close(x);
            return rc;
        }
    }
    return 0;
}

void ana_xsym_close(struct ana_xsym *x)
{
    if (x->sym && x->o && x->o->note)
        for (size_t i = 0; i < ana_sym_nr_notes(x->sym); i++)
            x->o->note(x->o->note_arg, ana_sym_note(x->sym, i));
    ana_sym_stack_release(&x->st);
    ana_sym_destroy(x->sym);
    free(x->addrs);
    memset(x, 0, sizeof(*x));
}

int ana_xsym_stack(struct ana_xsym *x, uint32_t id, const struct ana_sym_stack **out,
                   uint32_t *image)
{
    uint32_t img = 0;
    int depth = 0;

    *out = &x->st;
    if (id) {
        depth = fmt_reader_stack(x->r, id, &img, x->addrs, x->cap_addrs);
        if (depth < 0)
            depth = 0; /* an unknown id: show it as an empty stack */
        if ((uint32_t)depth > x->cap_addrs) {
            uint64_t *a = realloc(x->addrs, (size_t)depth * sizeof(*a));
            if (!a)
                return -ENOMEM;
            x->addrs = a;
            x->cap_addrs = (uint32_t)depth;
            depth = fmt_reader_stack(x->r, id, &img, x->addrs, x->cap_addrs);
        }
    }
    if (image)
        *image = img;
    return ana_sym_stack(x->sym, img, x->addrs, (uint32_t)depth, &x->st);
}

const char *ana_xsym_basename(const char *path)
{
    const char *b;

    if (!path || !*path)
        return "???";
    b = strrchr(path, '/');
    return b ? b + 1 : path;
}

const char *ana_xsym_name(const struct ana_sym_frame *f, char *buf, size_t size)
{
    if (f->function)
        return f->function;
    if (f->module)
        snprintf(buf, size, "%s+0x%" PRIx64, ana_xsym_basename(f->module), f->module_offset);
    else
        snprintf(buf, size, "0x%" PRIx64, f->addr);
    return buf;
}
