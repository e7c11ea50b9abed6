/* SPDX-License-Identifier: MIT */
/* The source file of a frame's place (ana_stacks.h): the path the debug
 * information gives, kept per place string while the stacks are read,
 * only for a command that asks (memscribe source). */
#include <errno.h>
#include <stdbool.h>

#include "analysis/core/ana_stacks.h"
#include "analysis/core/ana_stacks_internal.h"

int ana_stacks_note_file(struct ana_stacks *s, uint32_t place, const struct ana_sym_frame *f)
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

int ana_stacks_place_file(struct ana_stacks *s, uint32_t place, struct ana_place_file *out)
{
    int rc;

    if (!s->want_files) {
        s->want_files = true;
        /* Addresses read before were not noted: read again. */
        ana_map_release(&s->read_of);
        ana_map_init(&s->read_of, sizeof(struct addr_read));
        ana_stacks_drop_nodes(s);
        for (size_t i = 0; i < ANA_STACKS_RECENT; i++)
            s->recent[i].rd.nr = 0;
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
