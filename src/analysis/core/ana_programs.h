/* SPDX-License-Identifier: MIT */
/* Programs: the process images of a trace grouped by executable, for the
 * per-program view of a process tree (a build's 36 cc1s are one program).
 * An image whose executable is unknown is a program of its own. Programs
 * are numbered in the order of their first image. */
#ifndef ANA_PROGRAMS_H
#define ANA_PROGRAMS_H

#include <stdbool.h>
#include <stdint.h>

struct fmt_reader;
struct ana_filter;

struct ana_program {
    const char *exe; /* the trace's string (not NUL-terminated), NULL unknown */
    uint32_t exe_len;
    uint32_t nr_images; /* its images the filter selects */
    uint32_t first_image;
};

struct ana_programs {
    uint32_t *of_image; /* image index -> program */
    uint32_t nr_images;
    struct ana_program *v;
    uint32_t nr;
};

/* Group the images of r the filter f selects (NULL: all; ana_filter_image
 * by pid and --exe) by executable. Images not selected belong to a program
 * as well, not counted in its nr_images. Returns 0 or -ENOMEM. */
int ana_programs_make(struct ana_programs *p, struct fmt_reader *r, const struct ana_filter *f);
void ana_programs_release(struct ana_programs *p);

/* Whether some program has more than one selected image: then the
 * per-program view differs from the per-process one. */
bool ana_programs_merge(const struct ana_programs *p);

#endif
