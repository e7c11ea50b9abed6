/* SPDX-License-Identifier: MIT */
/* The HTML page's folds on a process tree (see ana_html_fold.h). */
#include "analysis/html/ana_html_fold.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_array.h"

/* The row id of stack in image, made on first use. */
static int id_of(struct ana_html_fold *h, uint32_t stack, uint32_t image, uint32_t *id)
{
    const uint32_t *known = ana_map_get(&h->id_of_stack, (uint64_t)stack + 1);
    const struct ana_programs *p = h->programs;
    uint64_t group = image < p->nr_images ? p->of_image[image] : UINT32_MAX;
    uint32_t place, function, *at, *v;
    int created, rc;

    /* Stack 0 (none) is every image's: not cached. */
    if (known && stack) {
        *id = *known;
        return 0;
    }
    if ((rc = ana_stacks_key(h->st, stack, 1, &place)) ||
        (rc = ana_stacks_key(h->st, stack, 0, &function)))
        return rc;
    if (!(at = ana_map_put(&h->row_index, (group << 32 | place) + 1, &created)))
        return -ENOMEM;
    if (created) {
        uint32_t cap = h->cap_ids;

        if (UTIL_ARRAY_RESERVE(h->place, cap, (size_t)h->nr_ids + 1, 256) ||
            UTIL_ARRAY_RESERVE(h->function, h->cap_ids, (size_t)h->nr_ids + 1, 256))
            return -ENOMEM;
        h->place[h->nr_ids] = place;
        h->function[h->nr_ids] = function;
        *at = h->nr_ids++;
    }
    *id = *at;
    if (!stack)
        return 0;
    if (!(v = ana_map_put(&h->id_of_stack, (uint64_t)stack + 1, NULL)))
        return -ENOMEM;
    *v = *id;
    return 0;
}

int ana_html_fold_cell_key(void *h, uint32_t stack, uint32_t image, uint32_t *key)
{
    return id_of(h, stack, image, key);
}

/* The folds' keys: of the row id, made for the image being folded if the
 * window cells never met the stack. */
static int place_key(void *arg, uint32_t stack, uint32_t *key)
{
    struct ana_html_fold_ctx *c = arg;
    uint32_t id;
    int rc = id_of(c->h, stack, c->image, &id);

    *key = rc ? 0 : c->h->place[id];
    return rc;
}

static int function_key(void *arg, uint32_t stack, uint32_t *key)
{
    struct ana_html_fold_ctx *c = arg;
    uint32_t id;
    int rc = id_of(c->h, stack, c->image, &id);

    *key = rc ? 0 : c->h->function[id];
    return rc;
}

/* A page row is tagged with its chain of functions: the flame fold's
 * ranking says whether it is listed. */
static int row_made(void *arg, uint32_t stack, uint32_t *tag)
{
    return function_key(arg, stack, tag);
}

/* A row stays to the end: its frames are kept for then. */
static int row_stays(void *arg, uint32_t stack)
{
    const struct ana_html_fold_ctx *c = arg;
    const struct ana_frame *f;
    int rc = ana_stacks_get(c->h->st, stack, &f);

    return rc < 0 ? rc : 0;
}

/* One context for both folds' callbacks; the image is set per fold. */
static struct ana_html_fold_ctx ctx_of(struct ana_html_fold *h)
{
    return (struct ana_html_fold_ctx){h, UINT32_MAX};
}

void ana_html_fold_init(struct ana_html_fold *h, struct ana_stacks *st,
                        const struct ana_html_options *o)
{
    memset(h, 0, sizeof(*h));
    h->st = st;
    h->o = o;
    h->programs = o->programs;
    h->ctx_ = ctx_of(h);
    ana_map_init(&h->row_index, sizeof(uint32_t));
    ana_map_init(&h->id_of_stack, sizeof(uint32_t));
    ana_fold_init(&h->rows, o->programs,
                  &(struct ana_fold_calls){
                      .key = place_key, .made = row_made, .stays = row_stays, .arg = &h->ctx_});
    /* Every site by functions alone: no rows by program. */
    ana_fold_init(
        &h->flame, NULL,
        &(struct ana_fold_calls){.key = function_key, .stays = row_stays, .arg = &h->ctx_});
    h->flame.all_sites = true;
}

void ana_html_fold_release(struct ana_html_fold *h)
{
    ana_fold_release(&h->rows);
    ana_fold_release(&h->flame);
    ana_map_release(&h->row_index);
    ana_map_release(&h->id_of_stack);
    free(h->place);
    free(h->function);
    memset(h, 0, sizeof(*h));
}

static int forget_stack(void *arg, uint32_t stack, const struct ana_site *s)
{
    struct ana_html_fold *h = arg;

    (void)s;
    ana_map_del(&h->id_of_stack, (uint64_t)stack + 1);
    return 0;
}

/* An image ended (or the pass did): its sites into both folds, then what
 * was kept per stack of it goes. */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_html_fold *h = arg;
    const struct ana_scope *s = ana_model_image(m, image);
    int rc;

    h->ctx_.image = image;
    if ((rc = ana_fold_image(&h->rows, m, image)) || (rc = ana_fold_image(&h->flame, m, image)) ||
        (rc = ana_model_each_site_of(m, image, forget_stack, h)))
        return rc;
    ana_stacks_drop_nodes(h->st);
    if (!s->ended || !h->o->let_go)
        return 0; /* at the end: nothing more to read */
    return h->o->let_go(h->o->let_go_arg, image, s->end_ns);
}

/* A process the page leaves out (--pid, --exe) ended: its stacks go. */
static int left_out(void *arg, uint32_t image, uint64_t end_ns)
{
    struct ana_html_fold *h = arg;

    return h->o->let_go(h->o->let_go_arg, image, end_ns);
}

/* Whether an event of kind may commit memory: its stack can name a commit
 * lifetime (ana_vm.c). */
static bool commits(unsigned kind)
{
    return kind == FMT_EV_MMAP || kind == FMT_EV_MREMAP || kind == FMT_EV_MPROTECT ||
           kind == FMT_EV_BRK || fmt_kind_is_win_vm(kind);
}

/* The commit lifetimes' keys are made as late as the end of the pass, of
 * processes whose stacks are gone by then: their frames are kept as they
 * come. */
static int keep_commit_stack(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_html_fold *h = arg;
    const struct ana_frame *f;
    int n;

    (void)st;
    if (!ev->stack || !commits(ev->kind))
        return 0;
    n = ana_stacks_get(h->st, ev->stack, &f);
    return n < 0 ? n : 0;
}

int ana_html_fold_subscribe(struct ana_html_fold *h, struct ana_model_options *mo,
                            struct ana_heap_replay *p)
{
    static const struct ana_heap_replay_ops ops = {.step = keep_commit_stack};

    mo->retire = (struct ana_model_retire){retire, h, h->o->let_go ? left_out : NULL};
    return ana_heap_replay_subscribe(p, &ops, h, 0);
}

int ana_html_fold_finish(struct ana_html_fold *h, const struct ana_model *m)
{
    int rc = ana_fold_finish(&h->rows, m);

    if (!rc)
        rc = ana_fold_finish(&h->flame, m);
    ana_map_release(&h->id_of_stack);
    ana_map_init(&h->id_of_stack, sizeof(uint32_t));
    return rc;
}

uint32_t ana_html_fold_row_id(const struct ana_html_fold *h, const struct ana_fold_row *r)
{
    const struct ana_programs *p = h->programs;
    uint64_t group = r->s.image < p->nr_images ? p->of_image[r->s.image] : UINT32_MAX;
    const uint32_t *id = ana_map_get(&h->row_index, (group << 32 | r->key) + 1);

    return id ? *id : UINT32_MAX;
}
