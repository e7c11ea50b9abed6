/* SPDX-License-Identifier: MIT */
/* Programs: images grouped by executable (see ana_programs.h). */
#include "analysis/core/ana_programs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_strtab.h"
#include "memscribe/trace.h"

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

/* The program of an image whose executable is path: the one its path
 * already has (paths interned, by_path[path id]), or a new one. Returns
 * the program, or -ENOMEM. */
static int program_of_path(struct ana_programs *p, struct ana_strtab *paths, uint32_t **by_path,
                           const struct fmt_image_info *ii, uint32_t image)
{
    char *path = strndup(ii->exe, ii->exe_len); /* the interner wants a C string */
    uint32_t id;
    int rc;

    if (!path)
        return -ENOMEM;
    rc = ana_strtab_intern(paths, path, &id);
    free(path);
    if (rc == 0)
        return (int)(*by_path)[id];
    uint32_t *grown = rc < 0 ? NULL : realloc(*by_path, ((size_t)id + 1) * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    *by_path = grown;
    if ((rc = add_program(p, ii, image)) < 0)
        return rc;
    (*by_path)[id] = (uint32_t)rc;
    return rc;
}

int ana_programs_make(struct ana_programs *p, struct fmt_reader *r, const struct ana_filter *f)
{
    uint32_t n = fmt_reader_nr_images(r), *by_path = NULL;
    struct ana_strtab paths = {0};
    int rc = 0;

    memset(p, 0, sizeof(*p));
    if (!(p->of_image = calloc((size_t)n + 1, sizeof(*p->of_image))))
        return -ENOMEM;
    p->nr_images = n;
    for (uint32_t i = 0; i < n; i++) {
        const struct fmt_image_info *ii = fmt_reader_image(r, i);

        /* An image whose executable is unknown is a program of its own. */
        rc = ii && ii->exe ? program_of_path(p, &paths, &by_path, ii, i) : add_program(p, ii, i);
        if (rc < 0)
            break;
        p->of_image[i] = (uint32_t)rc;
        if (ana_filter_image(f, i, ii ? ii->pid : 0))
            p->v[rc].nr_images++;
    }
    ana_strtab_release(&paths);
    free(by_path);
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
