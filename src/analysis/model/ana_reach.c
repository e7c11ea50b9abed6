/* SPDX-License-Identifier: MIT */
/* Leaks by reachability class: the REACH records' classes summed per site,
 * image and in all (ana_reach.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "analysis/model/ana_reach.h"

const unsigned ana_reach_order[4] = {FMT_REACH_DEFINITE, FMT_REACH_INDIRECT, FMT_REACH_POSSIBLE,
                                     FMT_REACH_REACHABLE};

const char ana_reach_legend[] =
    "definite: no pointer to the block anywhere; indirect: pointed to only from lost blocks; "
    "possible: only pointers into its middle; reachable: a pointer to its start from a root "
    "(globals, stacks, registers) or a reachable block (memcheck's classes at exit)";

const char *ana_reach_key(unsigned cls)
{
    static const char *const keys[FMT_NR_REACH] = {"unclassed", "still_reachable", "possibly_lost",
                                                   "indirectly_lost", "definitely_lost"};

    return cls < FMT_NR_REACH ? keys[cls] : "unclassed";
}

const char *ana_reach_title(unsigned cls)
{
    static const char *const titles[FMT_NR_REACH] = {"unclassed", "reachable", "possible",
                                                     "indirect", "definite"};

    return cls < FMT_NR_REACH ? titles[cls] : "unclassed";
}

bool ana_reach_present(const struct fmt_reader *r)
{
    return fmt_reader_reach_on(r) && fmt_reader_nr_reach(r) > 0;
}

static void add(struct ana_reach_sum *s, unsigned cls, uint64_t size)
{
    s->bytes[cls] += size;
    s->blocks[cls]++;
}

/* Whether a scan at ts_ns is at or before at_ns. Times are shown to the
 * microsecond (ana_time_format cuts), so a scan within the microsecond
 * asked counts: leaks --at a time copied from a scan's line finds it. */
static bool scan_by(uint64_t ts_ns, uint64_t at_ns)
{
    return ts_ns / 1000 <= at_ns / 1000;
}

const struct fmt_reach_info *ana_reach_find(const struct fmt_reader *r, uint32_t image,
                                            uint64_t at_ns)
{
    const struct fmt_reach_info *best = NULL;

    if (at_ns == UINT64_MAX)
        return fmt_reader_find_reach(r, image);
    for (uint32_t i = 0; i < fmt_reader_nr_reach(r); i++) {
        const struct fmt_reach_info *ri = fmt_reader_reach(r, i);

        if (ri->image == image && scan_by(ri->ts_ns, at_ns) && (!best || ri->ts_ns >= best->ts_ns))
            best = ri;
    }
    return best;
}

/* An image's exit is stamped when exit() reaches the collector; the scan
 * it asks for starts after. But the end the recorder writes is the latest
 * of that stamp, the image's last event and its last RSS sample
 * (rec_stream.c), and on a loaded machine a sample or an event of the
 * exiting program can come well after the scan began (a 1 ms slack failed
 * so). The exit's scan is the image's last, and an image killed by a
 * signal had none: a scan on request made while it ran is followed by the
 * exit's, or the image was killed, or it comes long before the end. */
#define ANA_REACH_EXIT_SLACK_NS 100000000u

bool ana_reach_at_exit(const struct fmt_reader *r, const struct fmt_reach_info *ri)
{
    const struct fmt_image_info *im = ri ? fmt_reader_image(r, ri->image) : NULL;

    if (!im || !im->ended || ri != fmt_reader_find_reach(r, ri->image))
        return false;
    if (im->status_known && WIFSIGNALED((int)im->exit_status))
        return false;
    return ri->ts_ns + ANA_REACH_EXIT_SLACK_NS >= im->end_ns;
}

unsigned ana_reach_class_of(const struct fmt_reader *r, uint32_t image, uint64_t serial,
                            uint64_t at_ns)
{
    return fmt_reader_reach_class(r, ana_reach_find(r, image, at_ns), serial);
}

/* ana_reach_find() of every image at once, in one pass over the records
 * (a calloc'd array of the trace's images), or NULL when out of memory:
 * for loops over images or blocks, where a search per image or block
 * would cost records x blocks. */
static const struct fmt_reach_info **ana_reach_find_all(const struct fmt_reader *r, uint64_t at_ns)
{
    uint32_t nr_images = fmt_reader_nr_images(r);
    const struct fmt_reach_info **of = calloc((size_t)nr_images + 1, sizeof(*of));

    for (uint32_t i = 0; of && i < fmt_reader_nr_reach(r); i++) {
        const struct fmt_reach_info *ri = fmt_reader_reach(r, i);

        /* the last record, or at at_ns the latest at or before it */
        if (ri->image < nr_images &&
            (at_ns == UINT64_MAX ||
             (scan_by(ri->ts_ns, at_ns) && (!of[ri->image] || ri->ts_ns >= of[ri->image]->ts_ns))))
            of[ri->image] = ri;
    }
    return of;
}

static bool scanned_not_at_exit(const struct fmt_reader *r, const struct fmt_reach_info *ri)
{
    return ri && ri->status == FMT_REACH_SCANNED && !ana_reach_at_exit(r, ri);
}

bool ana_reach_all_at_exit(const struct fmt_reader *r, const struct ana_model *m, uint32_t image,
                           uint64_t at_ns)
{
    if (image != UINT32_MAX)
        return !scanned_not_at_exit(r, ana_reach_find(r, image, at_ns));
    const struct fmt_reach_info **of = ana_reach_find_all(r, at_ns);
    bool all = true;

    for (uint32_t i = 0; i < ana_model_nr_images(m) && all; i++)
        all = !(ana_model_image(m, i)->seen &&
                scanned_not_at_exit(r, of ? (i < fmt_reader_nr_images(r) ? of[i] : NULL)
                                          : ana_reach_find(r, i, at_ns)));
    free(of);
    return all;
}

int ana_reach_build(struct ana_reach *out, const struct fmt_reader *r, const struct ana_model *m)
{
    return ana_reach_build_at(out, r, m, UINT64_MAX);
}

int ana_reach_build_at(struct ana_reach *out, const struct fmt_reader *r, const struct ana_model *m,
                       uint64_t at_ns)
{
    struct ana_block *b = NULL;
    long n = 0;

    *out = (struct ana_reach){0};
    out->nr_sites = ana_model_nr_sites(m);
    out->nr_images = fmt_reader_nr_images(r);
    out->site = calloc((size_t)out->nr_sites + 1, sizeof(*out->site));
    out->image = calloc((size_t)out->nr_images + 1, sizeof(*out->image));
    const struct fmt_reach_info **of = ana_reach_find_all(r, at_ns);
    if (!out->site || !out->image || !of || (n = ana_model_blocks(m, &b)) < 0) {
        free(of);
        ana_reach_release(out);
        return -ENOMEM;
    }
    /* an image's last record (by at_ns) counts */
    for (uint32_t i = 0; i < out->nr_images; i++) {
        if (of[i] && of[i]->status == FMT_REACH_SCANNED)
            out->nr_scanned++;
        else if (of[i])
            out->nr_unavailable++;
    }
    for (long i = 0; i < n; i++) {
        const struct fmt_reach_info *ri = b[i].image < out->nr_images ? of[b[i].image] : NULL;
        unsigned cls = fmt_reader_reach_class(r, ri, b[i].serial);

        if (b[i].stack < out->nr_sites)
            add(&out->site[b[i].stack], cls, b[i].size);
        if (b[i].image < out->nr_images)
            add(&out->image[b[i].image], cls, b[i].size);
        add(&out->total, cls, b[i].size);
    }
    free(b);
    free(of);
    return 0;
}

void ana_reach_release(struct ana_reach *rc)
{
    free(rc->site);
    free(rc->image);
    *rc = (struct ana_reach){0};
}

uint64_t ana_reach_lost_bytes(const struct ana_reach_sum *sum)
{
    return sum->bytes[FMT_REACH_DEFINITE] + sum->bytes[FMT_REACH_INDIRECT];
}

uint64_t ana_reach_lost_blocks(const struct ana_reach_sum *sum)
{
    return sum->blocks[FMT_REACH_DEFINITE] + sum->blocks[FMT_REACH_INDIRECT];
}
