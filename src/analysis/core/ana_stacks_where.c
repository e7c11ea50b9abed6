/* SPDX-License-Identifier: MIT */
/* Where frames come from (ana_stacks.h): the source file of a place (the
 * path the debug information gives, for memscribe source) and the files
 * and modules of a function's frames (for a call tree's filter), each kept
 * per string while the stacks are read, only for a command that asks. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "analysis/core/ana_stacks.h"
#include "analysis/core/ana_stacks_internal.h"
#include "analysis/core/ana_text.h"

/* Addresses read before a command asked were not noted: forget their
 * readings, so that each is read again. */
static void forget_reads(struct ana_stacks *s)
{
    ana_map_release(&s->read_of);
    ana_map_init(&s->read_of, sizeof(struct addr_read));
    ana_stacks_drop_nodes(s);
    for (size_t i = 0; i < ANA_STACKS_RECENT; i++)
        s->recent[i].rd.nr = 0;
}

static int note_file(struct ana_stacks *s, uint32_t place, const struct ana_sym_frame *f)
{
    int created, rc;
    uint32_t path;

    /* The path as it is on disk, not escaped: a string of its own, never
     * shown as a frame. */
    if ((rc = ana_strtab_intern(&s->text, f->file, &path)) < 0)
        return rc;
    struct place_file *pf = ana_map_put(&s->files, (uint64_t)place + 1, &created);
    if (!pf)
        return -ENOMEM;
    if (created)
        *pf = (struct place_file){.path = path, .line = f->line};
    else if (pf->path != path && !pf->other)
        pf->other = path;
    return 0;
}

/* Add the last part of path (escaped) to ids[*nr] unless there, or say
 * there are more. */
static int add_part(struct ana_stacks *s, const char *path, uint32_t *ids, uint8_t *nr, bool *more)
{
    const char *base = ana_sym_base_name(path);
    char safe[1024];
    uint32_t id;
    int rc;

    ana_text_escape(safe, sizeof(safe), base, strlen(base));
    if ((rc = ana_strtab_intern(&s->text, safe, &id)) < 0)
        return rc;
    for (unsigned i = 0; i < *nr; i++)
        if (ids[i] == id)
            return 0;
    if (*nr < ANA_WHERE_MAX)
        ids[(*nr)++] = id;
    else
        *more = true;
    return 0;
}

int ana_stacks_note_where(struct ana_stacks *s, const struct ana_frame *out,
                          const struct ana_sym_frame *f)
{
    int rc;

    if (s->want_files && f->function && f->file && f->line && (rc = note_file(s, out->place, f)))
        return rc;
    if (!s->want_where)
        return 0;
    struct function_where *w = ana_map_put(&s->wheres, (uint64_t)out->function + 1, NULL);
    if (!w)
        return -ENOMEM;
    if (f->function && f->file && (rc = add_part(s, f->file, w->files, &w->nr_files, &w->more)))
        return rc;
    if (f->module && (rc = add_part(s, f->module, w->modules, &w->nr_modules, &w->more)))
        return rc;
    return 0;
}

int ana_stacks_place_file(struct ana_stacks *s, uint32_t place, struct ana_place_file *out)
{
    int rc;

    if (!s->want_files) {
        s->want_files = true;
        forget_reads(s);
        /* Each node as a stack: every address of the trace is read, the
         * pages keeping the walks to a few loads per frame. */
        for (uint32_t n = 1; n < s->nr_stacks; n++)
            if ((rc = ana_stacks_walk(s, n, ANA_WALK_PLACES)) < 0)
                return rc;
    }
    const struct place_file *pf = ana_map_get(&s->files, (uint64_t)place + 1);
    if (!pf)
        return -ENOENT;
    *out = (struct ana_place_file){.path = ana_stacks_str(s, pf->path),
                                   .other = pf->other ? ana_stacks_str(s, pf->other) : NULL,
                                   .line = pf->line};
    return 0;
}

void ana_stacks_keep_where(struct ana_stacks *s)
{
    if (!s->want_where) {
        s->want_where = true;
        forget_reads(s);
    }
}

bool ana_stacks_where(const struct ana_stacks *s, uint32_t function, struct ana_where *out)
{
    const struct function_where *w =
        s->want_where ? ana_map_get(&s->wheres, (uint64_t)function + 1) : NULL;

    if (!w)
        return false;
    *out =
        (struct ana_where){.nr_files = w->nr_files, .nr_modules = w->nr_modules, .more = w->more};
    for (unsigned i = 0; i < w->nr_files; i++)
        out->files[i] = ana_stacks_str(s, w->files[i]);
    for (unsigned i = 0; i < w->nr_modules; i++)
        out->modules[i] = ana_stacks_str(s, w->modules[i]);
    return true;
}
