/* SPDX-License-Identifier: MIT */
/* Leaks by reachability class: the REACH records' classes summed per site,
 * image and in all (ana_reach.h). */
#include <errno.h>
#include <stdlib.h>

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

const struct fmt_reach_info *ana_reach_find(const struct fmt_reader *r, uint32_t image,
                                            uint64_t at_ns)
{
    const struct fmt_reach_info *best = NULL;

    if (at_ns == UINT64_MAX)
        return fmt_reader_find_reach(r, image);
    for (uint32_t i = 0; i < fmt_reader_nr_reach(r); i++) {
        const struct fmt_reach_info *ri = fmt_reader_reach(r, i);

        if (ri->image == image && ri->ts_ns <= at_ns && (!best || ri->ts_ns >= best->ts_ns))
            best = ri;
    }
    return best;
}

/* An image's exit is stamped when exit() reaches the collector; the scan
 * it asks for starts after. A scan made while it ran comes before by more
 * than the time unit's rounding. */
#define ANA_REACH_EXIT_SLACK_NS 1000000u

bool ana_reach_at_exit(const struct fmt_reader *r, const struct fmt_reach_info *ri)
{
    const struct fmt_image_info *im = ri ? fmt_reader_image(r, ri->image) : NULL;

    return im && im->ended && ri->ts_ns + ANA_REACH_EXIT_SLACK_NS >= im->end_ns;
}

unsigned ana_reach_class_of(const struct fmt_reader *r, uint32_t image, uint64_t serial,
                            uint64_t at_ns)
{
    return fmt_reader_reach_class(r, ana_reach_find(r, image, at_ns), serial);
}

bool ana_reach_all_at_exit(const struct fmt_reader *r, const struct ana_model *m, uint32_t image,
                           uint64_t at_ns)
{
    for (uint32_t i = 0; i < ana_model_nr_images(m); i++) {
        const struct fmt_reach_info *ri = ana_reach_find(r, i, at_ns);

        if ((image == UINT32_MAX ? ana_model_image(m, i)->seen : i == image) && ri &&
            ri->status == FMT_REACH_SCANNED && !ana_reach_at_exit(r, ri))
            return false;
    }
    return true;
}

int ana_reach_build(struct ana_reach *out, const struct fmt_reader *r, const struct ana_model *m)
{
    return ana_reach_build_at(out, r, m, UINT64_MAX);
}

int ana_reach_build_at(struct ana_reach *out, const struct fmt_reader *r, const struct ana_model *m,
                       uint64_t at_ns)
{
    struct ana_block *b = NULL;
    long n;

    *out = (struct ana_reach){0};
    out->nr_sites = ana_model_nr_sites(m);
    out->nr_images = fmt_reader_nr_images(r);
    out->site = calloc((size_t)out->nr_sites + 1, sizeof(*out->site));
    out->image = calloc((size_t)out->nr_images + 1, sizeof(*out->image));
    if (!out->site || !out->image || (n = ana_model_blocks(m, &b)) < 0) {
        ana_reach_release(out);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < fmt_reader_nr_reach(r); i++) {
        const struct fmt_reach_info *ri = fmt_reader_reach(r, i);

        if (ana_reach_find(r, ri->image, at_ns) != ri)
            continue; /* an image's last record (by at_ns) counts */
        if (ri->status == FMT_REACH_SCANNED)
            out->nr_scanned++;
        else
            out->nr_unavailable++;
    }
    for (long i = 0; i < n; i++) {
        const struct fmt_reach_info *ri = ana_reach_find(r, b[i].image, at_ns);
        unsigned cls = fmt_reader_reach_class(r, ri, b[i].serial);

        if (b[i].stack < out->nr_sites)
            add(&out->site[b[i].stack], cls, b[i].size);
        if (b[i].image < out->nr_images)
            add(&out->image[b[i].image], cls, b[i].size);
        add(&out->total, cls, b[i].size);
    }
    free(b);
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
