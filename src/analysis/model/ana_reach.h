/* SPDX-License-Identifier: MIT */
/* Leaks by reachability class (docs/leaks.md): memcheck's classes that the
 * recorder found for each image's live blocks at its exit (record --reach,
 * the trace's REACH records), added up per call site, per image and in
 * all, over the blocks a model kept (keep_blocks). What each class means
 * is enum fmt_reach_class (include/memscribe/trace.h). Costs a lookup per
 * live block; read once after the model is built. */
#ifndef ANA_REACH_H
#define ANA_REACH_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/model/ana_model.h"
#include "memscribe/trace.h"

/* Bytes and blocks per class; [FMT_REACH_UNKNOWN]: blocks the scan did
 * not class (an image not scanned, a block made after the scan). */
struct ana_reach_sum {
    uint64_t bytes[FMT_NR_REACH];
    uint64_t blocks[FMT_NR_REACH];
};

struct ana_reach {
    uint32_t nr_sites;          /* by stack id, as ana_model_site() */
    struct ana_reach_sum *site; /* nr_sites entries */
    uint32_t nr_images;
    struct ana_reach_sum *image; /* nr_images entries */
    struct ana_reach_sum total;
    uint32_t nr_scanned;     /* images the scan classed */
    uint32_t nr_unavailable; /* images whose scan could not run (REACH record says why) */
};

/* 1 when r holds classes for some image: a trace of record --reach. */
bool ana_reach_present(const struct fmt_reader *r);

/* Fill *out from m (made with keep_blocks, replayed to the end) and r's
 * REACH records. 0 or -ENOMEM. */
int ana_reach_build(struct ana_reach *out, const struct fmt_reader *r, const struct ana_model *m);
/* The same for m replayed to at_ns (UINT64_MAX: the end): each image's
 * classes are those of its last scan at or before at_ns (ana_reach_find);
 * blocks made after that scan are unclassed. */
int ana_reach_build_at(struct ana_reach *out, const struct fmt_reader *r, const struct ana_model *m,
                       uint64_t at_ns);
/* An image's last REACH record at or before at_ns (UINT64_MAX: its last),
 * or NULL. A trace holds a record per scan: at the image's exit, at
 * record -p's detach, on request (SIGUSR1 to record). O(records). */
const struct fmt_reach_info *ana_reach_find(const struct fmt_reader *r, uint32_t image,
                                            uint64_t at_ns);
/* The class of image's block serial (enum fmt_reach_class) in its last
 * scan at or before at_ns (UINT64_MAX: its last), FMT_REACH_UNKNOWN where
 * none classed it. O(records + log blocks). */
unsigned ana_reach_class_of(const struct fmt_reader *r, uint32_t image, uint64_t serial,
                            uint64_t at_ns);
/* Was ri the scan at its image's exit (its blocks then leaked), not one
 * made while the program ran on (a detach, a request: live blocks)? */
bool ana_reach_at_exit(const struct fmt_reader *r, const struct fmt_reach_info *ri);
/* Are the classes of m's image `image` (UINT32_MAX: of every image m saw)
 * at at_ns all from scans at exit, so that lost means lost at exit, not at
 * a scan while a program ran on? Images without a scan do not count. */
bool ana_reach_all_at_exit(const struct fmt_reader *r, const struct ana_model *m, uint32_t image,
                           uint64_t at_ns);
void ana_reach_release(struct ana_reach *rc);

/* sum's lost bytes and blocks: definitely and indirectly lost. */
uint64_t ana_reach_lost_bytes(const struct ana_reach_sum *sum);
uint64_t ana_reach_lost_blocks(const struct ana_reach_sum *sum);

/* The classes in the order reports list them (definite, indirect,
 * possible, reachable), their JSON key stems ("definitely_lost", ...) and
 * column titles ("definite", ...). */
extern const unsigned ana_reach_order[4];
const char *ana_reach_key(unsigned cls);
const char *ana_reach_title(unsigned cls);
/* The one line that says what the classes mean, for a table's foot. */
extern const char ana_reach_legend[];

#endif
