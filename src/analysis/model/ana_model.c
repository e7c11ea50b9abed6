/* SPDX-License-Identifier: MIT */
/* The heap model (see ana_model.h).
 *
 * Peak contribution uses a lazy trick so that each event costs O(1): every
 * time a scope's heap reaches a new maximum its generation is bumped; a
 * site whose generation is older than its scope's has not changed since
 * the latest peak, so its live bytes then are its live bytes now, saved
 * just before it next changes (and at ana_model_finish()). */
#include "analysis/model/ana_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_site_var.h"
#include "memscribe/trace.h"
#include "util/util_array.h"

/* In partial mode the range's highest heap delta starts below any. */
#define PARTIAL_PEAK_START ((uint64_t)INT64_MIN)

const char *ana_call_name(unsigned slot)
{
    static const char *const pool[ANA_NR_CALLS - ANA_NR_KINDS] = {
        "pool_create", "pool_destroy", "pool_alloc", "pool_realloc",
        "pool_free",   "batch_alloc",  "batch_free"};

    if (slot >= ANA_NR_KINDS)
        return slot < ANA_NR_CALLS ? pool[slot - ANA_NR_KINDS] : NULL;
    return slot && slot < FMT_EV_PROCESS_START ? fmt_kind_name(slot) : NULL;
}

bool ana_call_estimated(unsigned slot)
{
    return fmt_kind_is_heap_alloc(slot) || slot == FMT_EV_FREE ||
           (slot >= ANA_CALL_POOL_ALLOC && slot <= ANA_CALL_POOL_FREE);
}

static void scope_init(struct ana_scope *s, uint32_t image, bool partial)
{
    memset(s, 0, sizeof(*s));
    s->image = image;
    if (partial)
        s->peak = PARTIAL_PEAK_START;
}

int ana_model_create(struct ana_model **out, const struct ana_model_options *opt)
{
    struct ana_model *m = calloc(1, sizeof(*m));

    if (!m)
        return -ENOMEM;
    if (opt)
        m->opt = *opt;
    if (m->opt.temporary_threshold)
        m->opt.keep_blocks = true; /* as ana_model.h promises */
    if (m->opt.keep_blocks && m->opt.retire.fn && !m->opt.blocks_first) {
        free(m);
        return -EINVAL; /* the kept blocks name sites that would be dropped */
    }
    scope_init(&m->total, UINT32_MAX, false);
    ana_stepper_init(&m->step, &(struct ana_step_options){
                                   .filter = m->opt.filter,
                                   .loose_temporary = m->opt.loose_temporary,
                                   .temporary_threshold = m->opt.temporary_threshold,
                               });
    *out = m;
    if (ana_model_prog_init(m)) {
        ana_model_destroy(m);
        *out = NULL;
        return -ENOMEM;
    }
    return 0;
}

int ana_model_set_retire(struct ana_model *m, struct ana_model_retire retire)
{
    if (m->nr_sites || (m->opt.keep_blocks && !m->opt.blocks_first) || m->partial)
        return -EINVAL;
    m->opt.retire = retire;
    return 0;
}

int ana_model_create_partial(struct ana_model **out, const struct ana_model_options *opt)
{
    int rc = ana_model_create(out, opt);

    if (rc)
        return rc;
    /* Partial replays serve the strict rule only (no blocks kept). */
    if ((*out)->opt.keep_blocks || (*out)->opt.loose_temporary || (*out)->opt.programs ||
        (*out)->opt.retire.fn) {
        ana_model_destroy(*out);
        return -EINVAL;
    }
    (*out)->partial = true;
    scope_init(&(*out)->total, UINT32_MAX, true);
    ana_stepper_release(&(*out)->step);
    ana_stepper_init(&(*out)->step, &(struct ana_step_options){
                                        .filter = (*out)->opt.filter,
                                        .partial = true,
                                    });
    return 0;
}

void ana_model_destroy(struct ana_model *m)
{
    if (!m)
        return;
    free(m->images);
    free(m->site_of);
    free(m->sites);
    free(m->site_next);
    free(m->site_stack);
    for (uint32_t p = 0; p < m->nr_site_pages; p++)
        free(m->site_pages[p]);
    free(m->site_pages);
    free(m->site_page_nr);
    free(m->img_sites);
    ana_model_prog_release(m);
    ana_stepper_release(&m->step);
    free(m->cands);
    free(m->rss);
    ana_model_blocks_release(m);
    free(m);
}

int ana_model_reserve_sites(struct ana_model *m, uint32_t n)
{
    return UTIL_ARRAY_RESERVE_ZERO(m->site_of, m->nr_site_of, n, n) ? -ENOMEM : 0;
}

static struct ana_scope *get_image_slow(struct ana_model *m, uint32_t image)
{
    uint32_t old = m->nr_images;

    if (UTIL_ARRAY_RESERVE_ZERO(m->images, m->nr_images, (size_t)image + 1, 16))
        return NULL;
    for (uint32_t i = old; i < m->nr_images; i++)
        scope_init(&m->images[i], i, m->partial);
    return &m->images[image];
}

/* The common case inline: the per-event cost is what a report on a
 * large trace pays (bench/bench_report.sh). */
static inline struct ana_scope *get_image(struct ana_model *m, uint32_t image)
{
    return image < m->nr_images ? &m->images[image] : get_image_slow(m, image);
}

struct ana_scope *ana_model_image_make(struct ana_model *m, uint32_t image)
{
    return get_image(m, image);
}

/* A place for a new site: a dropped one's (retiring), else a new one. */
static uint32_t site_place(struct ana_model *m)
{
    if (m->free_site) {
        uint32_t k = m->free_site - 1;
        m->free_site = m->site_next[k];
        memset(&m->sites[k], 0, sizeof(m->sites[k]));
        return k;
    }
    /* site_next and site_stack have the sites' capacity: each grows
     * from a copy of the old one to the new. */
    uint32_t next_cap = m->cap_sites, stack_cap = m->cap_sites;
    if (UTIL_ARRAY_RESERVE_ZERO(m->sites, m->cap_sites, (size_t)m->nr_sites + 1, 64))
        return UINT32_MAX;
    if ((m->opt.retire.fn && UTIL_ARRAY_RESERVE(m->site_next, next_cap, m->cap_sites, 0)) ||
        UTIL_ARRAY_RESERVE(m->site_stack, stack_cap, m->cap_sites, 0))
        return UINT32_MAX;
    return m->nr_sites++;
}

/* Set stack's entry in a retiring model's paged index (k + 1, or 0 to
 * remove it). Returns 0 or -ENOMEM. */
static int set_paged(struct ana_model *m, uint32_t stack, uint32_t v)
{
    uint32_t p = stack >> ANA_SITE_PAGE_BITS, nr = m->nr_site_pages;

    if (v && (UTIL_ARRAY_RESERVE_ZERO(m->site_pages, m->nr_site_pages, (size_t)p + 1, 64) ||
              UTIL_ARRAY_RESERVE_ZERO(m->site_page_nr, nr, (size_t)p + 1, 64)))
        return -ENOMEM;
    if (v && !m->site_pages[p] &&
        !(m->site_pages[p] = calloc(ANA_SITE_PAGE, sizeof(*m->site_pages[p]))))
        return -ENOMEM;
    m->site_pages[p][stack & (ANA_SITE_PAGE - 1)] = v;
    if (v) {
        m->site_page_nr[p]++;
    } else if (!--m->site_page_nr[p]) {
        free(m->site_pages[p]);
        m->site_pages[p] = NULL;
    }
    return 0;
}

struct ana_site *ana_model_site_make(struct ana_model *m, uint32_t stack, uint32_t image)
{
    uint32_t k = ana_model_site_index(m, stack);

    if (k != UINT32_MAX)
        return &m->sites[k];
    bool paged = m->opt.retire.fn || m->paged_sites;
    if ((!paged && UTIL_ARRAY_RESERVE_ZERO(m->site_of, m->nr_site_of, (size_t)stack + 1, 1024)) ||
        (m->opt.retire.fn &&
         UTIL_ARRAY_RESERVE_ZERO(m->img_sites, m->nr_img_sites, (size_t)image + 1, 16)) ||
        (k = site_place(m)) == UINT32_MAX)
        return NULL;
    struct ana_site *s = &m->sites[k];
    s->image = image;
    if (paged && set_paged(m, stack, k + 1))
        return NULL;
    m->site_stack[k] = stack;
    if (m->opt.retire.fn) {
        m->site_next[k] = m->img_sites[image];
        m->img_sites[image] = k + 1;
    } else if (!paged) {
        m->site_of[stack] = k + 1;
    }
    if (stack >= m->nr_used)
        m->nr_used = stack + 1;
    return s;
}

static inline struct ana_site *get_site(struct ana_model *m, uint32_t stack, uint32_t image)
{
    uint32_t k = ana_model_site_index(m, stack);

    if (k != UINT32_MAX)
        return &m->sites[k];
    return ana_model_site_make(m, stack, image);
}

/* Before a site changes: save its live bytes at the latest peaks if it has
 * not changed since them. */
static inline void touch(struct ana_site *s, const struct ana_scope *img,
                         const struct ana_scope *all, bool partial)
{
    if (s->gen_ >= img->gen_ && s->gen_all_ >= all->gen_)
        return; /* the common case: no peak since it last changed */
    /* A partial model keeps signed deltas (two's complement). */
    uint64_t v = partial || s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;

    if (s->gen_ < img->gen_) {
        s->peak_bytes = v;
        s->gen_ = img->gen_;
    }
    if (s->gen_all_ < all->gen_) {
        /* An image that ended before the latest peak had nothing then. */
        s->peak_all_bytes = img->ended && img->end_gen_ < all->gen_ ? 0 : v;
        s->gen_all_ = all->gen_;
    }
}

static inline void heap_sub(struct ana_scope *s, uint64_t size, uint64_t count, bool partial)
{
    if (partial) {
        s->heap -= size; /* a delta: may wrap below zero */
        s->live_blocks -= count;
        return;
    }
    /* Blocks are only ended after being started, so this cannot go below
     * zero; saturate anyway rather than wrap on an inconsistent trace. */
    s->heap = s->heap >= size ? s->heap - size : 0;
    s->live_blocks = s->live_blocks >= count ? s->live_blocks - count : 0;
}

/* The total's heap is the step's; images keep their own. */
static inline __attribute__((always_inline)) int end_block(struct ana_model *m,
                                                           struct ana_scope *img,
                                                           const struct fmt_event *ev,
                                                           enum ana_temp temp, bool partial)
{
    struct ana_site *site = get_site(m, ev->ref_stack, ev->image);
    uint64_t n = fmt_event_ref_count(ev); /* blocks: an estimate in a sampled trace */

    if (!site)
        return -ENOMEM;
    touch(site, img, &m->total, partial);
    if (m->progs && ana_model_prog_touch(m, ev->ref_stack, ev->image))
        return -ENOMEM;
    site->live_bytes -= (int64_t)ev->ref_size;
    site->live_blocks -= (int64_t)n;
    if (ev->ref_size != ev->raw_ref_size || n > 1) { /* a sampled block's weight */
        site->var_live_bytes -= ana_se_bytes_term(ev->ref_size, ev->raw_ref_size);
        site->var_live_blocks -= ana_se_count_term(ev->ref_size, ev->raw_ref_size, n);
        site->live_recorded--;
    }
    heap_sub(img, ev->ref_size, n, partial);
    heap_sub(&m->total, ev->ref_size, n, partial);
    if (!img->ended)
        m->total.running_blocks =
            m->total.running_blocks >= n || partial ? m->total.running_blocks - n : 0;
    img->nr_frees += n;
    img->freed_bytes += ev->ref_size;
    m->total.nr_frees += n;
    m->total.freed_bytes += ev->ref_size;
    if (m->opt.keep_blocks)
        ana_model_block_del(m, ev->image, ev->ref);

    if (temp == ANA_TEMP_ASK_MERGE) {
        if (UTIL_ARRAY_RESERVE(m->cands, m->cap_cands, (size_t)m->nr_cands + 1, 64))
            return -ENOMEM;
        m->cands[m->nr_cands++] = (struct ana_temp_candidate){ev->ref,    ev->ref_size,  n,
                                                              ev->thread, ev->ref_stack, ev->image};
    } else if (temp == ANA_TEMP_YES) {
        site->nr_temporary += n;
        site->temporary_bytes += ev->ref_size;
        img->nr_temporary += n;
        img->temporary_bytes += ev->ref_size;
        m->total.nr_temporary += n;
        m->total.temporary_bytes += ev->ref_size;
    }
    return 0;
}

static inline __attribute__((always_inline)) int
start_block(struct ana_model *m, struct ana_scope *img, const struct fmt_event *ev, bool partial)
{
    struct ana_site *site = get_site(m, ev->stack, ev->image);
    uint64_t n = fmt_event_count(ev); /* blocks: an estimate in a sampled trace */

    if (!site)
        return -ENOMEM;
    touch(site, img, &m->total, partial);
    if (m->progs && ana_model_prog_touch(m, ev->stack, ev->image))
        return -ENOMEM;
    /* a block a segment carries in was allocated before it: live, not
     * one of its allocations */
    uint64_t made = ev->origin == FMT_ORIGIN_SNAPSHOT ? 0 : n;
    uint64_t made_bytes = made ? ev->size : 0;
    site->nr_allocs += made;
    site->alloc_bytes += made_bytes;
    site->live_bytes += (int64_t)ev->size;
    site->live_blocks += (int64_t)n;
    if (ev->size != ev->raw_size || n > 1) { /* a sampled block's weight */
        double var_bytes = ana_se_bytes_term(ev->size, ev->raw_size);
        double var_n = ana_se_count_term(ev->size, ev->raw_size, n);
        if (made) {
            site->var_alloc_bytes += var_bytes;
            site->var_allocs += var_n;
            site->nr_recorded++;
        }
        site->var_live_bytes += var_bytes;
        site->var_live_blocks += var_n;
        site->live_recorded++;
    }
    struct ana_scope *sc[2] = {img, &m->total};
    for (int i = 0; i < 2; i++) {
        sc[i]->heap += ev->size;
        sc[i]->nr_allocs += made;
        sc[i]->alloc_bytes += made_bytes;
        sc[i]->live_blocks += n;
    }
    if (!img->ended)
        m->total.running_blocks += n;
    if (m->opt.keep_blocks) {
        struct ana_block *b = ana_model_block_put(m, ev->image, ev->serial);
        if (!b)
            return -ENOMEM;
        b->serial = ev->serial;
        b->addr = ev->addr;
        b->size = ev->size;
        b->ts_ns = ev->ts_ns;
        b->stack = ev->stack;
        b->thread = ev->thread;
        b->image = ev->image;
        b->tid = ev->tid;
    }
    return 0;
}

/* After the heap changed: reached says whether it is a new peak. */
static inline void note_heap(struct ana_scope *s, bool reached, uint64_t ts)
{
    if (reached) {
        s->peak = s->heap;
        s->peak_ns = ts;
        s->peak_blocks = s->live_blocks;
        s->gen_++;
    }
    if (s->heap > s->max_since_mark)
        s->max_since_mark = s->heap;
}

/* The all-images scope after the heap changed: its running heap is the
 * step's, and reached the step's decision. */
static inline void note_total(struct ana_scope *s, uint64_t heap, bool reached, uint64_t ts)
{
    s->running_heap = heap;
    if (reached) {
        s->peak = heap;
        s->peak_ns = ts;
        s->peak_blocks = s->running_blocks;
        s->gen_++;
    }
    if (heap > s->max_since_mark)
        s->max_since_mark = heap;
}

/* Hand image's sites, their peak shares saved as of now, to the retire
 * callback, then drop them (opt.retire). */
static int retire_image(struct ana_model *m, uint32_t image)
{
    const struct ana_scope *img = &m->images[image];
    uint32_t k;
    int rc;

    if (ana_model_first_site(m, image) == UINT32_MAX)
        return 0;
    for (k = ana_model_first_site(m, image); k != UINT32_MAX; k = ana_model_next_site(m, k)) {
        touch(&m->sites[k], img, &m->total, false);
        if (m->progs && (rc = ana_model_prog_touch(m, m->site_stack[k], image)))
            return rc;
    }
    if ((rc = m->opt.retire.fn(m->opt.retire.arg, m, image)))
        return rc;
    for (k = ana_model_first_site(m, image); k != UINT32_MAX;) {
        uint32_t next = ana_model_next_site(m, k);
        set_paged(m, m->site_stack[k], 0);
        m->sites[k].image = UINT32_MAX;
        if (k < m->nr_shares)
            m->shares[k] = (struct ana_prog_share){0};
        m->site_next[k] = m->free_site;
        m->free_site = k + 1;
        k = next;
    }
    m->img_sites[image] = 0;
    return 0;
}

int ana_model_retire_image(struct ana_model *m, uint32_t image)
{
    return m->opt.retire.fn && image < m->nr_images ? retire_image(m, image) : 0;
}

int ana_model_each_site_of(const struct ana_model *m, uint32_t image, ana_model_site_fn *fn,
                           void *arg)
{
    int rc = 0;

    for (uint32_t k = ana_model_first_site(m, image); k != UINT32_MAX && !rc;
         k = ana_model_next_site(m, k))
        rc = fn(arg, m->site_stack[k], &m->sites[k]);
    return rc;
}

/* Image img exits (or exec replaces it): what it holds leaves the running
 * totals, heap and RSS, and stays its own (its leaks). */
static int image_exit(struct ana_model *m, struct ana_scope *img, const struct fmt_event *ev,
                      uint64_t heap)
{
    if (img->ended)
        return 0;
    if (m->progs)
        ana_model_prog_exit(m, img);
    img->ended = true;
    img->end_ns = ev->ts_ns;
    img->end_gen_ = m->total.gen_;
    m->total.running_blocks = m->total.running_blocks >= img->live_blocks
                                  ? m->total.running_blocks - img->live_blocks
                                  : 0;
    m->total.running_heap = heap;
    m->total.rss -= img->rss;
    int rc = m->opt.keep_blocks ? ana_model_blocks_image_end(m, img->image) : 0;
    return !rc && m->opt.retire.fn ? retire_image(m, img->image) : rc;
}

/* An aggregated trace's batch row (ana_step.h, st->batch): the blocks
 * born and freed inside its interval are allocations and frees of its
 * site and scopes, and the row's temporaries theirs; the heap does not
 * move. Their calls count apart (their kinds are not told apart); the row
 * itself counted in its kind's slot, which has no name (ana_call_name). */
static int batch_row(struct ana_model *m, struct ana_scope *img, const struct fmt_event *ev)
{
    struct ana_site *site = get_site(m, ev->stack, ev->image);
    uint64_t n = ev->arg[0];

    if (!site)
        return -ENOMEM;
    site->nr_allocs += n;
    site->alloc_bytes += ev->size;
    site->nr_temporary += ev->arg[1];
    site->temporary_bytes += ev->arg[2];
    struct ana_scope *sc[2] = {img, &m->total};
    for (int i = 0; i < 2; i++) {
        sc[i]->nr_calls[ANA_CALL_BATCH_ALLOC] += n;
        sc[i]->nr_calls[ANA_CALL_BATCH_FREE] += n;
        sc[i]->nr_allocs += n;
        sc[i]->alloc_bytes += ev->size;
        sc[i]->nr_frees += n;
        sc[i]->freed_bytes += ev->size;
        sc[i]->nr_temporary += ev->arg[1];
        sc[i]->temporary_bytes += ev->arg[2];
    }
    return 0;
}

/* An aggregated trace's transient group (st->transient): its site's bytes
 * and blocks live at the moment join the site, its image and the running
 * heap (its blocks are no allocations), or leave them again, so that the
 * peak the step decides holds each site's share then. */
static int transient_group(struct ana_model *m, struct ana_scope *img, const struct fmt_event *ev,
                           const struct ana_step *st, bool partial)
{
    struct ana_site *site = get_site(m, ev->stack, ev->image);
    uint64_t size = ev->size, n = ev->arg[0];
    uint64_t heap0 = img->heap, blocks0 = img->live_blocks;

    if (!site)
        return -ENOMEM;
    touch(site, img, &m->total, partial);
    if (m->progs && ana_model_prog_touch(m, ev->stack, ev->image))
        return -ENOMEM;
    if (st->transient > 0) {
        site->live_bytes += (int64_t)size;
        site->live_blocks += (int64_t)n;
        struct ana_scope *sc[2] = {img, &m->total};
        for (int i = 0; i < 2; i++) {
            sc[i]->heap += size;
            sc[i]->live_blocks += n;
        }
        if (!img->ended)
            m->total.running_blocks += n;
    } else {
        site->live_bytes -= (int64_t)size;
        site->live_blocks -= (int64_t)n;
        heap_sub(img, size, n, partial);
        heap_sub(&m->total, size, n, partial);
        if (!img->ended)
            m->total.running_blocks =
                m->total.running_blocks >= n || partial ? m->total.running_blocks - n : 0;
    }
    if (m->progs && !img->ended)
        ana_model_prog_heap(m, ev->image, img->heap - heap0, img->live_blocks - blocks0, ev->ts_ns);
    note_heap(img, partial ? (int64_t)img->heap > (int64_t)img->peak : img->heap > img->peak,
              ev->ts_ns);
    note_total(&m->total, st->heap, st->peak, ev->ts_ns);
    if (st->transient > 0 && !size) {
        /* Blocks of 0 bytes do not raise the heap, but when the group
         * that reached a peak ends with them they were live at it too. */
        if (img->heap == img->peak && img->peak_ns == ev->ts_ns)
            img->peak_blocks = img->live_blocks;
        if (m->total.running_heap == m->total.peak && m->total.peak_ns == ev->ts_ns)
            m->total.peak_blocks = m->total.running_blocks;
        if (m->progs && !img->ended)
            ana_model_prog_peak_blocks(m, ev->image, ev->ts_ns);
    }
    return 0;
}

static void note_time(struct ana_scope *s, uint64_t ts)
{
    if (!s->seen) {
        s->seen = true;
        s->first_ns = ts;
    }
    s->last_ns = ts;
}

/* RSS samples, dropped-event counts, exits and an aggregated trace's
 * rows. Returns 1 if ev was one, or -ENOMEM. */
static int other_event(struct ana_model *m, struct ana_scope *img, const struct fmt_event *ev,
                       const struct ana_step *st, bool partial)
{
    uint64_t heap = st->heap;

    switch (ev->kind) {
    case FMT_EV_HEAP_BATCH:
        return st->batch ? batch_row(m, img, ev) : 0;
    case FMT_EV_HEAP_TRANSIENT:
        return st->transient ? transient_group(m, img, ev, st, partial) : 0;
    case FMT_EV_RSS:
        if (m->partial) {
            if (UTIL_ARRAY_RESERVE(m->rss, m->cap_rss, (size_t)m->nr_rss + 1, 64))
                return -ENOMEM;
            m->rss[m->nr_rss++] = (struct ana_rss_sample){ev->ts_ns, ev->size, ev->image};
        }
        if (!img->ended)
            m->total.rss = m->total.rss - img->rss + ev->size;
        if (m->progs)
            ana_model_prog_rss(m, img, ev->size, ev->ts_ns);
        img->rss = ev->size;
        struct ana_scope *sc[2] = {img, &m->total};
        for (int i = 0; i < 2; i++) {
            sc[i]->has_rss = true;
            if (sc[i]->rss > sc[i]->rss_peak) {
                sc[i]->rss_peak = sc[i]->rss;
                sc[i]->rss_peak_ns = ev->ts_ns;
            }
        }
        return 1;
    case FMT_EV_DROPPED:
        img->nr_dropped += ev->arg[0];
        m->total.nr_dropped += ev->arg[0];
        return 1;
    case FMT_EV_COUNTER: /* the reader checked the id */
        img->exact[ev->arg[0]] = ev->size;
        img->exact_set[ev->arg[0] / 64] |= 1ull << ev->arg[0] % 64;
        img->has_exact = true;
        if (ev->arg[0] == FMT_CTR_PEAK_USABLE)
            img->exact_peak_ns = ev->ts_ns;
        return 1;
    case FMT_EV_PROCESS_EXIT:
        /* Partial ranges leave exits out of the running totals
         * (ana_step.h), and note only that the image ended, and when
         * (ana_pmodel.c merges it). */
        if (!m->partial) {
            int rc = image_exit(m, img, ev, heap);
            if (rc)
                return rc;
        } else if (!img->ended) {
            img->ended = true;
            img->end_ns = ev->ts_ns;
            img->end_gen_ = UINT64_MAX; /* its peak shares stay as they were */
        }
        return 1;
    default:
        return 0;
    }
}

/* Inline into ana_model_event(): every report's per-event cost. */
static inline __attribute__((always_inline)) int
apply(struct ana_model *m, const struct fmt_event *ev, const struct ana_step *st, bool partial)
{
    int rc;

    if (!st->selected)
        return ev->kind == FMT_EV_PROCESS_EXIT && m->opt.retire.left_out
                   ? m->opt.retire.left_out(m->opt.retire.arg, ev->image, ev->ts_ns)
                   : 0;
    struct ana_scope *img = get_image(m, ev->image);
    if (!img)
        return -ENOMEM;
    img->pid = ev->pid;
    note_time(img, ev->ts_ns);
    note_time(&m->total, ev->ts_ns);

    if (ev->origin == FMT_ORIGIN_SNAPSHOT && fmt_kind_is_heap_alloc(ev->kind)) {
        /* A block a --keep-last segment carries in: not a call. */
        img->nr_carried++;
        img->carried_bytes += ev->size;
        m->total.nr_carried++;
        m->total.carried_bytes += ev->size;
    } else if (ev->origin == FMT_ORIGIN_SNAPSHOT) {
        /* What was mapped when the stream began: not a call. */
        img->nr_start_maps++;
        m->total.nr_start_maps++;
    } else if (ana_call_slot(ev) < ANA_NR_CALLS && st->mine) {
        /* A sampled trace's heap calls: the calls they stand for. */
        uint64_t n = fmt_kind_is_heap_alloc(ev->kind) ? fmt_event_count(ev)
                     : ev->kind == FMT_EV_FREE        ? fmt_event_ref_count(ev)
                                                      : 1;

        img->nr_calls[ana_call_slot(ev)] += n;
        m->total.nr_calls[ana_call_slot(ev)] += n;
        if (ev->flags & FMT_EVF_FAILED) {
            img->nr_failed += n;
            m->total.nr_failed += n;
        }
    }
    if (fmt_event_is_arena_map(ev->kind, ev->origin, ev->size, ev->arg[0], ev->arg[1])) {
        img->nr_arena_maps++;
        m->total.nr_arena_maps++;
    }

    if (!st->ends && !st->starts) {
        if (st->unmatched) {
            img->nr_unmatched_frees++;
            m->total.nr_unmatched_frees++;
        }
        /* The heap did not change: no peak to check. */
        return (rc = other_event(m, img, ev, st, partial)) < 0 ? rc : 0;
    }
    uint64_t heap0 = img->heap, blocks0 = img->live_blocks; /* the programs' differences */
    if (st->ends && (rc = end_block(m, img, ev, st->temporary, partial)))
        return rc;
    if (st->unmatched) {
        img->nr_unmatched_frees++;
        m->total.nr_unmatched_frees++;
    }
    if (st->starts && (rc = start_block(m, img, ev, partial)))
        return rc;
    if (m->progs && !img->ended)
        ana_model_prog_heap(m, ev->image, img->heap - heap0, img->live_blocks - blocks0, ev->ts_ns);
    /* Signed in partial mode, where heap and peak are deltas; the same
     * for a whole trace, whose heap never reaches 2^63. */
    note_heap(img, partial ? (int64_t)img->heap > (int64_t)img->peak : img->heap > img->peak,
              ev->ts_ns);
    note_total(&m->total, st->heap, st->peak, ev->ts_ns); /* the step's decision */
    return 0;
}

/* One event in one mode: partial is a constant in each caller below, so
 * the compiler drops the other mode's branches from the per-event path. */
static inline __attribute__((always_inline)) int
event(struct ana_model *m, const struct fmt_event *ev, struct ana_step *st, bool partial)
{
    int rc = ana_stepper_event_mode(&m->step, ev, st, partial);

    return rc < 0 ? rc : apply(m, ev, st, partial);
}

/* A function per mode: each keeps fewer values live than both in one. */
__attribute__((noinline)) static int event_partial(struct ana_model *m, const struct fmt_event *ev)
{
    struct ana_step st;

    return event(m, ev, &st, true);
}

__attribute__((noinline)) static int event_whole(struct ana_model *m, const struct fmt_event *ev)
{
    struct ana_step st;

    return event(m, ev, &st, false);
}

int ana_model_event(struct ana_model *m, const struct fmt_event *ev)
{
    return m->partial ? event_partial(m, ev) : event_whole(m, ev);
}

int ana_model_event_step(struct ana_model *m, const struct fmt_event *ev, struct ana_step *st)
{
    return m->partial ? event(m, ev, st, true) : event(m, ev, st, false);
}

int ana_model_apply(struct ana_model *m, const struct fmt_event *ev, const struct ana_step *st)
{
    return m->partial ? apply(m, ev, st, true) : apply(m, ev, st, false);
}

struct ana_step_options ana_model_step_options(const struct ana_model_options *mo)
{
    struct ana_model_options none = {0};

    if (!mo)
        mo = &none;
    return (struct ana_step_options){
        .filter = mo->filter,
        .loose_temporary = mo->loose_temporary,
        .temporary_threshold = mo->temporary_threshold,
    };
}

/* The replay's steps, one function per mode (as event_whole, event_partial). */
static int on_step_whole(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    return apply(arg, ev, st, false);
}

static int on_step_partial(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    return apply(arg, ev, st, true);
}

static int on_finish(void *arg)
{
    return ana_model_finish(arg);
}

int ana_model_subscribe(struct ana_model *m, struct ana_heap_replay *p)
{
    static const struct ana_heap_replay_ops whole = {.step = on_step_whole, .finish = on_finish},
                                            partial = {.step = on_step_partial,
                                                       .finish = on_finish};
    const struct ana_step_options *o = &p->opt;

    if (o->filter != m->opt.filter || o->partial != m->partial ||
        o->temporary_threshold != m->opt.temporary_threshold ||
        (o->loose_temporary || o->temporary_threshold) !=
            (m->opt.loose_temporary || m->opt.temporary_threshold))
        return -EINVAL;
    return ana_heap_replay_subscribe(p, m->partial ? &partial : &whole, m, 0);
}

int ana_model_build(struct ana_model **out, struct fmt_reader *r,
                    const struct ana_model_options *opt, const struct ana_scan_options *so)
{
    struct ana_step_options step = ana_model_step_options(opt);
    struct fmt_trace_counts c;
    struct ana_heap_replay replay;
    int rc;

    if ((rc = ana_model_create(out, opt)))
        return rc;
    fmt_reader_counts(r, &c);
    ana_heap_replay_init(&replay, &step);
    /* A retiring model's index is paged (ana_model_internal.h). */
    if ((!(*out)->opt.retire.fn &&
         (rc = ana_model_reserve_sites(*out,
                                       c.nr_stacks < UINT32_MAX ? c.nr_stacks + 1 : UINT32_MAX))) ||
        (rc = ana_model_subscribe(*out, &replay)) || (rc = ana_heap_replay_run(&replay, r, so))) {
        ana_model_destroy(*out);
        *out = NULL;
    }
    ana_heap_replay_release(&replay);
    return rc;
}

int ana_model_finish(struct ana_model *m)
{
    for (uint32_t i = 0; i < m->nr_sites; i++) {
        struct ana_site *s = &m->sites[i];
        if (s->image != UINT32_MAX) /* not a dropped site's place */
            touch(s, &m->images[s->image], &m->total, m->partial);
    }
    ana_model_prog_finish(m);
    for (uint32_t i = 0; m->opt.retire.fn && i < m->nr_img_sites; i++) {
        int rc = retire_image(m, i);
        if (rc)
            return rc;
    }
    return 0;
}

uint32_t ana_model_nr_images(const struct ana_model *m)
{
    uint32_t n = m->nr_images;

    while (n && !m->images[n - 1].seen)
        n--;
    return n;
}

const struct ana_scope *ana_model_image(const struct ana_model *m, uint32_t image)
{
    return image < m->nr_images ? &m->images[image] : NULL;
}

const struct ana_scope *ana_model_total(const struct ana_model *m)
{
    return &m->total;
}

uint32_t ana_model_nr_seen(const struct ana_model *m)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < m->nr_images; i++)
        n += m->images[i].seen;
    return n;
}

bool ana_model_all_ended(const struct ana_model *m)
{
    for (uint32_t i = 0; i < m->nr_images; i++)
        if (m->images[i].seen && !m->images[i].ended)
            return false;
    return true;
}

uint32_t ana_model_nr_sites(const struct ana_model *m)
{
    return m->nr_used;
}

const struct ana_site *ana_model_site(const struct ana_model *m, uint32_t stack)
{
    uint32_t k = ana_model_site_index(m, stack);

    return k == UINT32_MAX ? NULL : &m->sites[k];
}

void ana_model_mark(struct ana_model *m)
{
    for (uint32_t i = 0; i < m->nr_images; i++)
        m->images[i].max_since_mark = m->images[i].heap;
    m->total.max_since_mark = m->total.running_heap;
}
