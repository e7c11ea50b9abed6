/* SPDX-License-Identifier: MIT */
/* Programs: images grouped by executable (see ana_programs.h). */
#include "analysis/core/ana_programs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_map.h"
#include "memscribe/trace.h"

/* FNV-1a of the executable's path: the map's key (a collision is told
 * apart by comparing the paths). */
static uint64_t path_hash(const char *s, uint32_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (uint32_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h | 1; /* never 0, the map's empty key */
}

static int add_program(struct ana_programs *p, const struct fmt_image_info *ii, uint32_t image)
{
    struct ana_program *v = realloc(p->v, ((size_t)p->nr + 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    p->v = v;
    v[p->nr] = (struct ana_program){.exe = ii && ii->exe ? ii->exe : NULL,
                                    .exe_len = ii && ii->exe ? ii->exe_len : 0,
                                    .first_image = image};
    return (int)p->nr++;
}

int ana_programs_make(struct ana_programs *p, struct fmt_reader *r, const struct ana_filter *f)
{
    uint32_t n = fmt_reader_nr_images(r);
    struct ana_map by_path; /* path hash -> first program of that hash */
    int rc = 0;

    memset(p, 0, sizeof(*p));
    ana_map_init(&by_path, sizeof(uint32_t));
    if (!(p->of_image = calloc((size_t)n + 1, sizeof(*p->of_image))))
        return -ENOMEM;
    p->nr_images = n;
    for (uint32_t i = 0; i < n && rc >= 0; i++) {
        const struct fmt_image_info *ii = fmt_reader_image(r, i);
        uint32_t *slot = NULL, prog = UINT32_MAX;
        int created = 1;

        if (ii && ii->exe) {
            slot = ana_map_put(&by_path, path_hash(ii->exe, ii->exe_len), &created);
            if (!slot) {
                rc = -ENOMEM;
                break;
            }
            /* Programs of one hash: the first, then a linear look at the
             * rest (a collision of two paths is all but unheard of). */
            for (uint32_t k = created ? p->nr : *slot; k < p->nr; k++)
                if (p->v[k].exe && p->v[k].exe_len == ii->exe_len &&
                    !memcmp(p->v[k].exe, ii->exe, ii->exe_len)) {
                    prog = k;
                    break;
                }
        }
        if (prog == UINT32_MAX) {
            if ((rc = add_program(p, ii, i)) < 0)
                break;
            prog = (uint32_t)rc;
            if (slot && created)
                *slot = prog;
        }
        p->of_image[i] = prog;
        if (ana_filter_image(f, i, ii ? ii->pid : 0))
            p->v[prog].nr_images++;
    }
    ana_map_release(&by_path);
    if (rc < 0) {
        ana_programs_release(p);
        return rc;
    }
    return 0;
}

void ana_programs_release(struct ana_programs *p)
{
    free(p->of_image);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

bool ana_programs_merge(const struct ana_programs *p)
{
    for (uint32_t k = 0; k < p->nr; k++)
        if (p->v[k].nr_images > 1)
            return true;
    return false;
}
