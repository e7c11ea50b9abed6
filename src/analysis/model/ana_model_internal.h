/* SPDX-License-Identifier: MIT */
/* The heap model's state, shared by ana_model.c (one pass in order) and
 * ana_pmodel.c (ranges of chunks replayed in parallel, then merged). */
#ifndef ANA_MODEL_INTERNAL_H
#define ANA_MODEL_INTERNAL_H

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_step.h"

/* Partial mode: a free met before its thread's first allocation in the
 * range, which is temporary if the block was that thread's latest
 * allocation before the range (the merge decides). */
struct ana_temp_candidate {
    uint64_t ref;
    uint64_t size;
    uint64_t count; /* blocks it stands for (fmt_event_ref_count) */
    uint32_t thread;
    uint32_t stack;
    uint32_t image;
};

/* Partial mode: an RSS sample, replayed in order by the merge (the
 * all-images RSS is a sum of each image's latest sample). */
struct ana_rss_sample {
    uint64_t ts_ns;
    uint64_t size;
    uint32_t image;
};

/* The per-program view (ana_model_options.programs): a site's live bytes
 * at its program's latest peak, kept as the sites' own (touch). */
struct ana_prog_share {
    uint64_t bytes;
    uint64_t gen;
};

struct ana_model {
    struct ana_model_options opt;
    struct ana_scope *images;
    uint32_t nr_images;
    struct ana_scope total;
    /* Sites by stack id through an index: site_of[stack] is its place in
     * sites plus one (0: none). A trace's stack ids number every node of
     * its stack trees, most of them not the leaf of any event's stack, so
     * 4 bytes per id and the site itself only where an event has it (a
     * 301-process build: 3.17 M ids, 617 k sites). */
    uint32_t *site_of;
    uint32_t nr_site_of;    /* allocated */
    struct ana_site *sites; /* in the order of first use */
    uint32_t nr_sites, cap_sites;
    uint32_t nr_used;        /* highest stack id with a site, plus one */
    struct ana_stepper step; /* what each event means; its threads' state */
    /* keep_blocks (ana_model_blocks.c): each image's live blocks, serial
     * -> struct ana_block; with blocks_first, ended images' blocks among
     * the first blocks_first of all ended ones (at most twice as many,
     * none after serial kept_above once it is set). */
    struct ana_map *block_maps;
    uint32_t nr_block_maps;
    struct ana_block *kept;
    size_t nr_kept, cap_kept;
    uint64_t kept_above;

    /* Partial mode (a range of a trace that does not start at its
     * beginning): heap, live blocks and live bytes are deltas from the
     * range's start and may go below zero (uint64_t fields hold them in
     * two's complement); peak is the range's highest delta (starting from
     * INT64_MIN), and each site's peak_bytes its delta then. */
    bool partial;
    struct ana_temp_candidate *cands;
    size_t nr_cands, cap_cands;
    struct ana_rss_sample *rss;
    size_t nr_rss, cap_rss;

    /* Programs (ana_model_programs.c; NULL without): their scopes, each
     * like the total's restricted to the program's images (running heap,
     * its peak, RSS of the running ones), their counters summed from the
     * images' at finish; the sites' shares at their program's peak, by
     * stack id; the program's peak generation when each image ended. */
    struct ana_scope *progs;
    uint32_t nr_progs;
    struct ana_prog_share *shares; /* by place in sites */
    uint32_t nr_shares;
    uint64_t *end_pgen; /* by image (programs->nr_images) */

    /* Retiring (opt.retire.fn): each image's sites in a list through
     * site_next (places + 1, 0 ends it), headed by img_sites[image]; the
     * stack of each place; places of dropped sites (image UINT32_MAX) in
     * a list through site_next headed by free_site, used again first. */
    uint32_t *site_next, *site_stack; /* by place, cap_sites (site_next: retiring only) */
    /* ... and the index by stack in pages of ANA_SITE_PAGE ids (site_of
     * unused), each with its number of sites and freed with the last: a
     * build's stack ids number every process's nodes. paged_sites: the
     * same index without retiring, for a model of a few of a build's
     * stacks (the index's replay of one chunk, ana_pmodel_index.c). */
    bool paged_sites;
    uint32_t **site_pages;
    uint32_t *site_page_nr;
    uint32_t nr_site_pages;
    uint32_t *img_sites; /* by image, nr_img_sites */
    uint32_t nr_img_sites;
    uint32_t free_site;
};

/* The places in m->sites of image's sites (retiring models only): for
 * (k = ana_model_first_site(m, image); k != UINT32_MAX; k = ana_model_next_site(m, k)). */
static inline uint32_t ana_model_first_site(const struct ana_model *m, uint32_t image)
{
    return image < m->nr_img_sites ? m->img_sites[image] - 1 : UINT32_MAX;
}
static inline uint32_t ana_model_next_site(const struct ana_model *m, uint32_t k)
{
    return m->site_next[k] - 1;
}

/* The program hooks of the model (ana_model_programs.c), called only when
 * m->progs is set: before site `stack` of image changes; after image's
 * heap moved by d_heap bytes and d_blocks blocks; when image ends; when
 * image's RSS sample changes from old to new; at finish. Return 0 or
 * -ENOMEM where they can fail. */
int ana_model_prog_init(struct ana_model *m);
int ana_model_prog_touch(struct ana_model *m, uint32_t stack, uint32_t image);
void ana_model_prog_heap(struct ana_model *m, uint32_t image, uint64_t d_heap, uint64_t d_blocks,
                         uint64_t ts);
/* An aggregated trace's transient group of 0 bytes at ts: if image's
 * program reached its peak at ts, its blocks count at the peak. */
void ana_model_prog_peak_blocks(struct ana_model *m, uint32_t image, uint64_t ts);
void ana_model_prog_exit(struct ana_model *m, const struct ana_scope *img);
void ana_model_prog_rss(struct ana_model *m, const struct ana_scope *img, uint64_t sample,
                        uint64_t ts);
void ana_model_prog_finish(struct ana_model *m);
void ana_model_prog_release(struct ana_model *m);

/* keep_blocks (ana_model_blocks.c): the place of image's new block
 * serial (NULL: out of memory); its end; image's end (blocks_first: its
 * blocks among the first kept, the rest dropped; 0 or -ENOMEM); the
 * maps and the kept array freed. */
struct ana_block *ana_model_block_put(struct ana_model *m, uint32_t image, uint64_t serial);
void ana_model_block_del(struct ana_model *m, uint32_t image, uint64_t serial);
int ana_model_blocks_image_end(struct ana_model *m, uint32_t image);
void ana_model_blocks_release(struct ana_model *m);

/* Hand image's sites to opt.retire's callback and drop them, as its exit
 * does in a replay: the index's build retires each image once the
 * summaries' live state of it is read (ana_pmodel_index.c). Returns 0 (no
 * site, or no opt.retire) or the callback's -errno. */
int ana_model_retire_image(struct ana_model *m, uint32_t image);

/* Create a model in partial mode. */
int ana_model_create_partial(struct ana_model **out, const struct ana_model_options *opt);

/* Size the site index for stack ids below n at once (no doubling slack)
 * when the number of stacks is known up front. Returns 0 or -ENOMEM. */
int ana_model_reserve_sites(struct ana_model *m, uint32_t n);

/* The site of stack (of image, when it is new), made on first use.
 * Returns NULL when out of memory. */
struct ana_site *ana_model_site_make(struct ana_model *m, uint32_t stack, uint32_t image);

/* The scope of image, made (with those before it) on first use. NULL when
 * out of memory. */
struct ana_scope *ana_model_image_make(struct ana_model *m, uint32_t image);

/* The place in m->sites of stack's site, or UINT32_MAX for none. */
#define ANA_SITE_PAGE_BITS 12
#define ANA_SITE_PAGE (1u << ANA_SITE_PAGE_BITS)

static inline uint32_t ana_model_site_index(const struct ana_model *m, uint32_t stack)
{
    if (m->site_pages) {
        uint32_t p = stack >> ANA_SITE_PAGE_BITS;
        const uint32_t *pg = p < m->nr_site_pages ? m->site_pages[p] : NULL;
        return pg ? pg[stack & (ANA_SITE_PAGE - 1)] - 1 : UINT32_MAX;
    }
    return stack < m->nr_site_of ? m->site_of[stack] - 1 : UINT32_MAX;
}

#endif
