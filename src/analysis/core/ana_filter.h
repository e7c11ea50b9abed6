/* SPDX-License-Identifier: MIT */
/* Which events an analysis looks at: --pid, --exe and --thread (WPA's
 * Process and Thread columns). --exe selects process images (an exec
 * starts a new image under the same pid) whose executable's name or path
 * matches a glob. A heap block belongs to the thread that allocated it, so
 * a free made by another thread still ends a selected block. */
#ifndef ANA_FILTER_H
#define ANA_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

struct fmt_reader;

struct ana_filter {
    uint32_t *pids;
    size_t nr_pids;
    uint32_t *tids;
    size_t nr_tids;
    char **exes; /* --exe globs */
    size_t nr_exes;
    /* Image index -> selected by --exe (ana_filter_resolve_exes). */
    bool *image_on;
    size_t nr_image_on;
    /* Learned from events: thread index -> selected. */
    bool *thread_on;
    size_t nr_thread_on;
};

void ana_filter_init(struct ana_filter *f);
void ana_filter_release(struct ana_filter *f);

/* Parse a comma-separated list of ids ("12,40") into the pid or tid set.
 * Returns 0, -EINVAL or -ENOMEM. */
int ana_filter_add_pids(struct ana_filter *f, const char *list);
int ana_filter_add_tids(struct ana_filter *f, const char *list);
/* Add one --exe pattern: a glob (fnmatch) matched against the image's
 * executable name (the path's last part) and against its whole path.
 * Returns 0, -EINVAL (empty) or -ENOMEM. */
int ana_filter_add_exe(struct ana_filter *f, const char *glob);
/* Decide which images of r the --exe patterns select; call once the
 * trace is open, before any test below. Returns how many images match
 * (all of them without --exe), or -ENOMEM. */
long ana_filter_resolve_exes(struct ana_filter *f, struct fmt_reader *r);

static inline bool ana_filter_is_empty(const struct ana_filter *f)
{
    return !f || (!f->nr_pids && !f->nr_tids && !f->nr_exes);
}

/* Learn the tid of ev's thread index; call for every event before the
 * tests below. Returns 0 or -ENOMEM. */
int ana_filter_note(struct ana_filter *f, const struct fmt_event *ev);

/* Is process image `image` (of process pid) selected by --pid and --exe? */
bool ana_filter_image(const struct ana_filter *f, uint32_t image, uint32_t pid);
/* Does ana_filter_image select every image (no --pid, no --exe)? Asked
 * before it where it runs for every event. */
static inline bool ana_filter_all_images(const struct ana_filter *f)
{
    return !f || (!f->nr_pids && !f->nr_exes);
}
/* Is the thread with this index (seen by ana_filter_note) selected? */
bool ana_filter_thread(const struct ana_filter *f, uint32_t thread);

#endif
