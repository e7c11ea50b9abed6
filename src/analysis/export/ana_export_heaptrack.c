/* SPDX-License-Identifier: MIT */
/* heaptrack's data file, version 3 (as heaptrack_interpret writes it, read
 * by heaptrack_print and heaptrack_gui): lines of lower-case hex.
 *
 *     v <heaptrack version> <file version>   X <command>   I <page size> <pages>
 *     s <length> <string>          strings, numbered from 1
 *     i <ip> <module> [<function> <file> <line>]...   ips from 1, inline chain
 *     t <ip> <parent trace>        the trace tree, from 1 (0: no parent)
 *     a <size> <trace>             allocation infos, from 0
 *     + <info>   - <info>          a block starts, ends
 *     c <ms>   R <pages>           time, resident memory
 *
 * Definitions are written just before first use, and allocation infos are
 * numbered in the order of their first "+" line, as heaptrack_interpret
 * numbers them: heaptrack_gui counts allocations per info in a vector it
 * grows by one at each new index, and an index past its end (a first "+ 1"
 * with no "+ 0" before it) makes it write past the vector and crash.
 *
 * heaptrack_print counts a "-" as temporary when its info is the one of
 * the last "+" line, and a "-" resets that to info 0: so a "-" directly
 * after a "+" of the same info, or a "- 0" after a "-", counts as
 * temporary. A "-" may name any info equal to the block's (same size and
 * trace: heaptrack only reads the size and the trace), so an info gets a
 * second index, its alternate, which such a "-" names instead: the "+"
 * of that info just before the "-" is written under the alternate (the
 * writer looks one +/- line ahead), and the info of index 0 puts every
 * "+" after its first under the alternate, so that a later "-" after a
 * "-" has an index other than 0 to name. The one case left: the first
 * block of the file freed, not temporary, after a "-" (or right after its
 * own "+"), before a second block of the same size and stack: heaptrack
 * then counts one temporary allocation more than memscribe.
 *
 * The order of the lines: heaptrack_gui's Consumed chart is the running
 * sum of "+" and "-" sampled at each "c" line, so every line goes out
 * between the ticks around its event: a tick every HT_TICK_MS of the
 * trace's time, as heaptrack's timer writes them (of several with no
 * event between, the first and the last: the sum is the same at each),
 * one at memscribe's peak, and one at the end. The sum at each tick is
 * then memscribe's heap in use at that time, at the peak's tick its peak,
 * and the chart's top is the peak. Between two ticks the order is free.
 * memscribe calls a block temporary when the thread that allocated it
 * freed it with no other allocation in between, whatever other threads
 * did. So the "+" of each thread's latest block is held back: if the
 * thread frees that block next, "+ -" go out together; if the thread
 * allocates again (or another thread frees it), the "+" goes out then.
 * Holding a "+" back only lowers the heap in between, so heaptrack's peak
 * cannot grow. At a tick every held "+" must be out, and the lines after
 * it are buffered until the blocks held at the tick are settled (or a
 * later tick comes with lines before it), so that one of them that turns
 * out temporary goes out last before the tick and its "-" first after it
 * (heaptrack_print does not count "c" lines between a "+" and its "-").
 * A block whose "+" went out at a tick is still shown temporary if its
 * "-" is the next "+" or "-" line. Memory grows with stacks, infos and
 * threads (on a tree, those of the processes running: see below); the
 * buffer after a tick is capped. heaptrack's one stream cannot show two
 * temporary blocks of different threads both live at one tick, nor one
 * live across ticks between which another thread allocates or frees:
 * such blocks count as ordinary there.
 *
 * A process tree (docs/event-model.md): an image's blocks leave heap in
 * use at its exit (or exec) and stay its leaks. heaptrack's one stream has
 * no processes: its heap in use and its leaks are one sum. So the blocks
 * an ended image left go out as "-" lines just before the next "+" of a
 * running one (nothing else can raise heaptrack's total): its peak is the
 * tree's, and what every image that ended after the last allocation left
 * stays leaked (for a single process: all of its leaks). The blocks of
 * images that ended earlier read as freed at that point; their leaks are
 * in memscribe's report, or in an export of that process (--pid, --exe).
 *
 * Memory on a tree: heaptrack's numbering is kept by image. An ip is
 * keyed by its image and address, a trace by its parent and ip, so an
 * ended image's ips and traces are never named again: when the output
 * streams (ana_export_options.image_done), they go, with the traces of its
 * stack ids, once an image ends a second after it, as its stacks do
 * (ANA_ENDED_LAG_NS); the counts go on, so the numbers are the same. Its
 * infos go too once its blocks are out and no line waits with them; a
 * block's info is kept with it, so that its "-" needs no stack. Infos of
 * the empty trace (0) are shared by every image and stay.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_map.h"
#include "util/util_array.h"

#define HEAPTRACK_VERSION_CODE 0x010400 /* the heaptrack release whose format this is */
#define HEAPTRACK_FILE_VERSION 3
#define HT_PAGE_SIZE 4096
/* Lines buffered after a tick while the blocks held then settle. */
#define HT_MAX_HELD (1u << 20)
/* The ticks' period: heaptrack's timer thread writes a "c" line every
 * 10 ms (libheaptrack.cpp). */
#define HT_TICK_MS 10

#define HT_NO_INDEX UINT32_MAX
/* The trace of an info slot that is free (its next links the free list). */
#define HT_FREE_TRACE UINT32_MAX

/* An allocation info: a size and a trace. Its file indexes are given at
 * the first "+" line that names them (HT_NO_INDEX: not yet). */
struct ht_info {
    uint64_t size;
    uint32_t trace;
    uint32_t next; /* hash chain, index + 1 */
    uint32_t index;
    uint32_t alt; /* the alternate index (see the top of the file) */
};

/* A line on its way (ordering, see the top of the file). 'T' marks where
 * a block held at the waiting tick was freed as a temporary: at the flush
 * it is a plain "-", or nothing for the block whose "+" goes out last
 * before the tick. 'x' is a temporary "-": of the "+" just before it. */
struct ht_line {
    char op;         /* '+', '-', 'x', 'c', 'T' */
    uint32_t info;   /* or the time in ms for 'c' */
    uint64_t serial; /* '+', 'T' */
};

/* A thread's latest block whose "+" is held back. */
struct ht_held {
    uint64_t serial; /* 0: none */
    uint32_t info;
    uint32_t pos; /* in heaptrack.held_list */
    bool at_tick; /* held at the waiting tick */
};

/* A block held at the waiting tick, settled: temporary or not. */
struct ht_settled {
    uint64_t serial;
    uint32_t info;
    bool temporary;
};

/* A live block of a trace with several images, by serial. */
struct ht_live {
    uint64_t size;
    uint32_t info;
    uint32_t thread;
    uint32_t image;
};

/* An image's part of heaptrack's numbering (see the top of the file). */
struct ht_image {
    struct ana_map ips;      /* (image, addr) -> ip index */
    struct ana_map traces;   /* (parent trace, ip) -> trace index */
    struct ana_map trace_of; /* stack id -> trace index */
    uint32_t *infos;         /* the infos of its traces */
    uint32_t nr_infos, cap_infos;
    uint32_t nr_live; /* on a tree: its blocks not ended */
};

struct heaptrack {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    struct ana_strtab strs; /* string index = position + 1 */
    struct ht_image *images;
    uint32_t nr_images; /* in images[] */
    uint32_t nr_ips, nr_traces;
    uint32_t nr_stacks;
    struct ht_info *infos; /* slots, some free (HT_FREE_TRACE) */
    uint32_t nr_infos, cap_infos;
    uint32_t free_info;  /* the first free slot + 1, or 0 */
    uint32_t *info_hash; /* index + 1 */
    uint32_t info_mask;

    /* The writer (put): file indexes given so far, the index heaptrack_print
     * compares the next "-" with, and the "+" line not yet written, with
     * the "c" lines that came after it. */
    uint32_t nr_indexes;
    uint32_t ht_last;
    bool ht_after_plus;                  /* the last +/- line written is a "+" */
    uint64_t ht_sum, ht_max, peak_bytes; /* heaptrack's heap in use and peak; memscribe's */
    bool deferred;                       /* a "-" of deferred_info waits (put_minus) */
    uint32_t deferred_info;
    bool pending;
    uint32_t pending_info;
    uint32_t *pending_ms;
    uint32_t nr_pending_ms, cap_pending_ms;

    /* Ordering (see the top of the file). */
    uint64_t last_ms;     /* the latest event's time */
    uint64_t next_tick;   /* the next tick of the period, in ms */
    uint64_t last_tick;   /* the last tick placed, in ms */
    uint64_t last_serial; /* the block of the last +/- line placed if a "+", else 0 */
    struct ht_held *held; /* by thread index */
    uint32_t nr_threads;
    uint32_t *held_list; /* the threads that hold a block */
    uint32_t nr_held, cap_held_list;
    bool tick_open;        /* a tick waits for its held blocks: lines buffer */
    bool buf_heap;         /* the buffer has a line other than "c" */
    uint32_t tick_ms;      /* the waiting tick's */
    uint32_t nr_tick_open; /* blocks held at the tick not yet settled */
    struct ht_settled *settled;
    uint32_t nr_settled, cap_settled;
    struct ht_line *buf;
    uint32_t nr_buf, cap_buf;
    uint64_t peak_step, step;
    const struct ana_heap_replay *pass0; /* counts the steps of find_peak */
    const struct ana_export_options *o;

    /* Process trees (see the top of the file). */
    bool tree;           /* the trace has more than one image */
    struct ana_map live; /* serial -> struct ht_live */
    bool *ended;         /* by image: exited, its blocks not yet out */
    uint32_t nr_ended_cap;
    uint32_t nr_ended; /* images in ended[] */
    uint64_t *serials; /* scratch for the blocks going out */
    uint32_t cap_serials;
    /* Streamed: images that ended, oldest first, whose tables go at
     * ANA_ENDED_LAG_NS; then those whose infos wait for their blocks. */
    bool drops;
    struct ana_ended gone;
    uint32_t *waiting;
    uint32_t nr_waiting, cap_waiting;
};

static int str(struct heaptrack *h, const char *s, uint32_t *index)
{
    int rc = ana_strtab_intern(&h->strs, s, index);

    if (rc < 0)
        return rc;
    (*index)++;
    if (rc == 1)
        ana_xout_printf(h->out, "s %zx %s\n", strlen(s), s);
    return 0;
}

/* The tables of image, made on first use. NULL: out of memory. The
 * pointer holds until the next call. */
static struct ht_image *image_at(struct heaptrack *h, uint32_t image)
{
    if (UTIL_ARRAY_RESERVE_ZERO(h->images, h->nr_images, (size_t)image + 1, 16))
        return NULL;
    return &h->images[image];
}

static int ip_index(struct heaptrack *h, struct ht_image *im, uint32_t image,
                    const struct ana_sym_line *lines, uint32_t n, uint32_t *out)
{
    const struct ana_sym_frame *phys = lines[n - 1].frame;
    uint64_t key = ((uint64_t)image << 48 | (phys->addr & 0xffffffffffffull)) + 1;
    uint32_t mod, fn[64], file[64];
    char buf[64];
    int rc;

    if (ana_xmap_get(&im->ips, key, out))
        return 0;
    if (n > 64)
        n = 64;
    if ((rc = str(h, phys->module ? phys->module : "", &mod)))
        return rc;
    for (uint32_t i = 0; i < n; i++)
        if ((rc = str(h, ana_xsym_name(lines[i].frame, buf, sizeof(buf)), &fn[i])) ||
            (rc = str(h, lines[i].frame->file ? lines[i].frame->file : "", &file[i])))
            return rc;
    *out = ++h->nr_ips;
    if ((rc = ana_xmap_put(&im->ips, key, *out)))
        return rc;
    ana_xout_printf(h->out, "i %" PRIx64 " %x", phys->addr, mod);
    for (uint32_t i = 0; i < n; i++)
        ana_xout_printf(h->out, " %x %x %x", fn[i], file[i], lines[i].frame->line);
    return ana_xout_write(h->out, "\n", 1);
}

/* The trace of a stack id: its cleaned frames, root first, as a path in
 * the trace tree, kept in the tables of *owner, the stack's image. hint:
 * the image of the event that names it, whose tables are asked first. */
static int trace_index(struct heaptrack *h, uint32_t id, uint32_t hint, uint32_t *out,
                       uint32_t *owner)
{
    const struct ana_sym_stack *st;
    struct ht_image *im = image_at(h, hint);
    uint32_t parent = 0;
    int rc;

    if (id > h->nr_stacks)
        id = 0;
    *owner = hint;
    if (!im)
        return -ENOMEM;
    if (ana_xmap_get(&im->trace_of, (uint64_t)id + 1, out))
        return 0;
    if ((rc = ana_xsym_stack(h->sym, id, &st, owner)))
        return rc;
    if (!(im = image_at(h, *owner)))
        return -ENOMEM;
    /* Walk addresses from the root: lines with the same index form one ip. */
    for (uint32_t end = st->nr_lines; end > 0;) {
        uint32_t begin = end - 1, ip, t;
        while (begin > 0 && st->lines[begin - 1].index == st->lines[end - 1].index)
            begin--;
        if ((rc = ip_index(h, im, *owner, &st->lines[begin], end - begin, &ip)))
            return rc;
        uint64_t key = ((uint64_t)parent << 32 | ip) + 1;
        if (!ana_xmap_get(&im->traces, key, &t)) {
            t = ++h->nr_traces;
            if ((rc = ana_xmap_put(&im->traces, key, t)))
                return rc;
            ana_xout_printf(h->out, "t %x %x\n", ip, parent);
        }
        parent = t;
        end = begin;
    }
    *out = parent;
    return ana_xmap_put(&im->trace_of, (uint64_t)id + 1, parent);
}

static uint32_t info_hash(uint64_t size, uint32_t trace)
{
    uint64_t k = size * 0x9e3779b97f4a7c15ull ^ trace * 0xff51afd7ed558ccdull;
    return (uint32_t)(k ^ (k >> 32));
}

/* A new info in a free slot, else a new one. */
static int info_new(struct heaptrack *h, uint64_t size, uint32_t trace, uint32_t *out)
{
    if (h->free_info) {
        *out = h->free_info - 1;
        h->free_info = h->infos[*out].next;
    } else if (UTIL_ARRAY_RESERVE(h->infos, h->cap_infos, (size_t)h->nr_infos + 1, 1024)) {
        return -ENOMEM;
    } else {
        *out = h->nr_infos++;
    }
    h->infos[*out] =
        (struct ht_info){.size = size, .trace = trace, .index = HT_NO_INDEX, .alt = HT_NO_INDEX};
    return 0;
}

static int info_rehash(struct heaptrack *h)
{
    uint32_t cap = h->info_hash ? (h->info_mask + 1) * 2 : 4096;
    uint32_t *hash = calloc(cap, sizeof(*hash));

    if (!hash)
        return -ENOMEM;
    for (uint32_t i = 0; i < h->nr_infos; i++) {
        if (h->infos[i].trace == HT_FREE_TRACE)
            continue; /* its next links the free slots */
        uint32_t b = info_hash(h->infos[i].size, h->infos[i].trace) & (cap - 1);
        h->infos[i].next = hash[b];
        hash[b] = i + 1;
    }
    free(h->info_hash);
    h->info_hash = hash;
    h->info_mask = cap - 1;
    return 0;
}

/* info joins the infos of image, to go with its tables. */
static int info_own(struct heaptrack *h, uint32_t image, uint32_t info)
{
    struct ht_image *im = image_at(h, image);

    if (!im || UTIL_ARRAY_RESERVE(im->infos, im->cap_infos, (size_t)im->nr_infos + 1, 64))
        return -ENOMEM;
    im->infos[im->nr_infos++] = info;
    return 0;
}

/* The info of a block of size bytes allocated at stack (named by an event
 * of image hint). */
static int info_index(struct heaptrack *h, uint64_t size, uint32_t stack, uint32_t hint,
                      uint32_t *out)
{
    uint32_t trace, owner;
    int rc;

    if ((rc = trace_index(h, stack, hint, &trace, &owner)))
        return rc;
    if ((!h->info_hash || h->nr_infos > h->info_mask) && (rc = info_rehash(h)))
        return rc;
    uint32_t b = info_hash(size, trace) & h->info_mask;
    for (uint32_t i = h->info_hash[b]; i; i = h->infos[i - 1].next)
        if (h->infos[i - 1].size == size && h->infos[i - 1].trace == trace) {
            *out = i - 1;
            return 0;
        }
    if ((rc = info_new(h, size, trace, out)))
        return rc;
    h->infos[*out].next = h->info_hash[b];
    h->info_hash[b] = *out + 1;
    /* The empty trace's infos are every image's: they stay. */
    return trace && h->drops ? info_own(h, owner, *out) : 0;
}

/* Free info's slot: out of its hash chain, into the free list. */
static void info_free(struct heaptrack *h, uint32_t info)
{
    struct ht_info *in = &h->infos[info];
    uint32_t *link = &h->info_hash[info_hash(in->size, in->trace) & h->info_mask];

    while (*link != info + 1)
        link = &h->infos[*link - 1].next;
    *link = in->next;
    in->trace = HT_FREE_TRACE;
    in->next = h->free_info;
    h->free_info = info + 1;
}

/* Whether image's infos may go: its blocks are out and no line waits
 * with one of them (buffered after a tick, pending or deferred). */
static bool infos_idle(const struct heaptrack *h, const struct ht_image *im)
{
    if (im->nr_live || h->tick_open || h->nr_buf || h->nr_settled)
        return false;
    for (uint32_t i = 0; i < im->nr_infos; i++)
        if ((h->pending && h->pending_info == im->infos[i]) ||
            (h->deferred && h->deferred_info == im->infos[i]))
            return false;
    return true;
}

/* The infos of the images whose tables went, where they may go now. */
static void free_waiting(struct heaptrack *h)
{
    for (uint32_t k = 0; k < h->nr_waiting;) {
        struct ht_image *im = &h->images[h->waiting[k]];
        if (!infos_idle(h, im)) {
            k++;
            continue;
        }
        for (uint32_t i = 0; i < im->nr_infos; i++)
            info_free(h, im->infos[i]);
        free(im->infos);
        im->infos = NULL;
        im->nr_infos = im->cap_infos = 0;
        h->waiting[k] = h->waiting[--h->nr_waiting];
    }
}

/* A file index of info, given now ("a" line). */
static int new_index(struct heaptrack *h, uint32_t info, uint32_t *index)
{
    const struct ht_info *in = &h->infos[info];

    *index = h->nr_indexes++;
    return ana_xout_printf(h->out, "a %" PRIx64 " %x\n", in->size, in->trace);
}

/* Would heaptrack's heap in use, size bytes higher, stay off memscribe's
 * peak (below it until heaptrack has reached it, at most it after)? */
static bool ht_fits(const struct heaptrack *h, uint64_t size)
{
    uint64_t sum = h->ht_sum + size;

    return h->ht_max >= h->peak_bytes ? sum <= h->peak_bytes : sum < h->peak_bytes;
}

/* The index a non-temporary "-" of info names so that heaptrack_print does
 * not take it for temporary, or HT_NO_INDEX if it has none. */
static uint32_t minus_index(const struct heaptrack *h, uint32_t info)
{
    const struct ht_info *in = &h->infos[info];
    uint32_t last = h->ht_after_plus ? h->ht_last : 0;

    if (in->index != last)
        return in->index;
    return in->alt != HT_NO_INDEX && in->alt != last ? in->alt : HT_NO_INDEX;
}

static int write_minus(struct heaptrack *h, uint32_t info, uint32_t index)
{
    h->ht_sum -= h->infos[info].size;
    h->ht_after_plus = false;
    return ana_xout_printf(h->out, "- %x\n", index);
}

/* The deferred "-", if it can go out now (force: whatever it names). */
static int write_deferred(struct heaptrack *h, bool force)
{
    uint32_t index;

    if (!h->deferred)
        return 0;
    index = minus_index(h, h->deferred_info);
    if (index == HT_NO_INDEX && !force)
        return 0;
    h->deferred = false;
    return write_minus(h, h->deferred_info,
                       index == HT_NO_INDEX ? h->infos[h->deferred_info].index : index);
}

/* Write the pending "+" under its index or (alt) its alternate, then the
 * "c" lines after it; plain: the next line is not its temporary "-". */
static int write_pending(struct heaptrack *h, bool alt, bool plain)
{
    struct ht_info *in = &h->infos[h->pending_info];
    int rc = 0;

    if (!h->pending)
        return 0;
    h->pending = false;
    /* Heaptrack's heap in use must not pass the peak while a "-" waits. */
    if (h->deferred && !ht_fits(h, in->size) && (rc = write_deferred(h, true)))
        return rc;
    /* Index 0's info: every "+" after its first under the alternate. */
    if (in->index == 0)
        alt = true;
    if (in->index == HT_NO_INDEX)
        rc = new_index(h, h->pending_info, &in->index);
    else if (alt && in->alt == HT_NO_INDEX)
        rc = new_index(h, h->pending_info, &in->alt);
    h->ht_last = alt && in->alt != HT_NO_INDEX ? in->alt : in->index;
    h->ht_after_plus = true;
    h->ht_sum += in->size;
    h->ht_max = h->ht_sum > h->ht_max ? h->ht_sum : h->ht_max;
    if (!rc)
        rc = ana_xout_printf(h->out, "+ %x\n", h->ht_last);
    for (uint32_t i = 0; i < h->nr_pending_ms && !rc; i++)
        rc = ana_xout_printf(h->out, "c %x\n", h->pending_ms[i]);
    h->nr_pending_ms = 0;
    return rc ? rc : plain ? write_deferred(h, false) : 0;
}

/* A non-temporary "-" of info. One
 * that heaptrack_print would take for temporary waits (deferred) for a
 * line after which it is not: a "-", or a "+" that leaves heaptrack's heap
 * off the peak. */
static int put_minus(struct heaptrack *h, uint32_t info)
{
    uint32_t index = minus_index(h, info);
    int rc;

    if (index == HT_NO_INDEX && !h->deferred && ht_fits(h, 0)) {
        h->deferred = true;
        h->deferred_info = info;
        return 0;
    }
    if (index == HT_NO_INDEX)
        index = h->infos[info].index; /* counts as temporary: no way out */
    if ((rc = write_minus(h, info, index)))
        return rc;
    return write_deferred(h, false);
}

/* Write one +/-/c line, keeping heaptrack's temporary rule honest (see
 * the top of the file): a "+" waits for the next +/- line. */
static int put(struct heaptrack *h, char op, uint32_t info, bool temporary)
{
    int rc;

    if (op == 'c') {
        /* A "-" that waits goes out before the tick: the sum at a tick is
         * the heap at that time (after the "+" that waits, if any). */
        if (h->deferred && ((rc = write_pending(h, false, true)) || (rc = write_deferred(h, true))))
            return rc;
        if (!h->pending)
            return ana_xout_printf(h->out, "c %x\n", info);
        if (UTIL_ARRAY_RESERVE(h->pending_ms, h->cap_pending_ms, (size_t)h->nr_pending_ms + 1, 16))
            return -ENOMEM;
        h->pending_ms[h->nr_pending_ms++] = info;
        return 0;
    }
    if (op == '+') {
        if ((rc = write_pending(h, false, true)))
            return rc;
        h->pending = true;
        h->pending_info = info;
        return 0;
    }
    /* A "-": the "+" before it takes the alternate if it is of the same
     * info and this "-" is not its temporary end. */
    if ((rc = write_pending(h, h->pending && h->pending_info == info && !temporary, !temporary)))
        return rc;
    if (temporary)
        return write_minus(h, info, h->ht_last);
    return put_minus(h, info);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    uint32_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* Place a line: as put() takes it, with the block of the last +/- line. */
static int emit(struct heaptrack *h, const struct ht_line *l)
{
    if (l->op != 'c')
        h->last_serial = l->op == '+' ? l->serial : 0;
    if (l->op == '+' || l->op == 'c')
        return put(h, l->op, l->info, false);
    return put(h, '-', l->info, l->op == 'x');
}

/* A line in time order: buffered while a tick waits, else written. */
static int line(struct heaptrack *h, char op, uint32_t info, uint64_t serial)
{
    const struct ht_line l = {op, info, serial};
    int rc;

    if (!h->tick_open)
        return emit(h, &l);
    if ((rc = grow((void **)&h->buf, &h->cap_buf, h->nr_buf + 1, sizeof(*h->buf))))
        return rc;
    h->buf[h->nr_buf++] = l;
    if (op != 'c') {
        h->buf_heap = true;
        h->last_serial = op == '+' ? serial : 0;
    }
    return 0;
}

/* thread holds the block serial of info back (its "+" not placed). */
static int hold(struct heaptrack *h, uint32_t thread, uint64_t serial, uint32_t info)
{
    if (UTIL_ARRAY_RESERVE(h->held_list, h->cap_held_list, (size_t)h->nr_held + 1, 64))
        return -ENOMEM;
    h->held[thread] = (struct ht_held){.serial = serial, .info = info, .pos = h->nr_held};
    h->held_list[h->nr_held++] = thread;
    return 0;
}

/* thread's held block is let go (its "+" is placed by the caller). */
static void release(struct heaptrack *h, uint32_t thread)
{
    uint32_t pos = h->held[thread].pos, last = h->held_list[--h->nr_held];

    h->held_list[pos] = last;
    h->held[last].pos = pos;
    h->held[thread].serial = 0;
    h->held[thread].at_tick = false;
}

/* The waiting tick goes out: the "+" lines of the blocks held at it (the
 * first that was freed temporary last), its "c", the buffered "c" lines
 * that waited with it, that block's "-", then the rest of the buffer. A
 * block still held (a later tick, a full buffer, the end) stays its
 * thread's latest: its "-" shows temporary if it comes next. */
static int flush_tick(struct heaptrack *h)
{
    const struct ht_settled *spike = NULL;
    uint32_t i = 0;
    int rc = 0;

    h->tick_open = false;
    for (uint32_t k = 0; k < h->nr_settled && !rc; k++) {
        const struct ht_settled *b = &h->settled[k];
        if (b->temporary && !spike)
            spike = b;
        else
            rc = emit(h, &(struct ht_line){'+', b->info, b->serial});
    }
    /* Backwards: release() moves the last of the list into the hole. */
    for (uint32_t k = h->nr_held; k-- > 0 && !rc;) {
        uint32_t t = h->held_list[k];
        if (!h->held[t].at_tick)
            continue;
        rc = emit(h, &(struct ht_line){'+', h->held[t].info, h->held[t].serial});
        release(h, t);
    }
    if (spike && !rc)
        rc = emit(h, &(struct ht_line){'+', spike->info, spike->serial});
    if (!rc)
        rc = emit(h, &(struct ht_line){'c', h->tick_ms, 0});
    /* The buffer holds "c" lines first (a tick waits with the one before
     * only while no other line came), then the lines of one interval. */
    for (; i < h->nr_buf && h->buf[i].op == 'c' && !rc; i++)
        rc = emit(h, &h->buf[i]);
    if (spike && !rc)
        rc = emit(h, &(struct ht_line){'x', spike->info, 0});
    for (; i < h->nr_buf && !rc; i++)
        if (!(spike && h->buf[i].op == 'T' && h->buf[i].serial == spike->serial))
            rc = emit(h, &h->buf[i]);
    h->nr_buf = 0;
    h->nr_settled = 0;
    h->nr_tick_open = 0;
    if (!rc)
        free_waiting(h); /* no line waits with their infos now */
    return rc;
}

/* thread's block held at the tick is settled. */
static int settle(struct heaptrack *h, uint32_t thread, bool temporary)
{
    const struct ht_held *held = &h->held[thread];
    int rc;

    if ((rc = grow((void **)&h->settled, &h->cap_settled, h->nr_settled + 1, sizeof(*h->settled))))
        return rc;
    h->settled[h->nr_settled++] = (struct ht_settled){held->serial, held->info, temporary};
    release(h, thread);
    if (--h->nr_tick_open == 0)
        return flush_tick(h);
    return 0;
}

/* thread's held block will not be temporary: its "+" goes out now. */
static int unhold(struct heaptrack *h, uint32_t thread)
{
    const struct ht_held held = h->held[thread];

    if (!held.serial)
        return 0;
    if (held.at_tick)
        return settle(h, thread, false);
    release(h, thread);
    return line(h, '+', held.info, held.serial);
}

static int thread_grow(struct heaptrack *h, uint32_t thread)
{
    uint32_t n = h->nr_threads ? h->nr_threads : 16;

    while (n <= thread)
        n *= 2;
    struct ht_held *p = realloc(h->held, n * sizeof(*p));
    if (!p)
        return -ENOMEM;
    memset(p + h->nr_threads, 0, (n - h->nr_threads) * sizeof(*p));
    h->held = p;
    h->nr_threads = n;
    return 0;
}

/* A tick at ms: every held "+" goes out before its "c" line. */
static int tick(struct heaptrack *h, uint64_t ms)
{
    int rc;

    h->last_tick = ms;
    if (h->tick_open) {
        /* Nothing happened since the tick that waits: this one waits too. */
        if (!h->buf_heap && h->nr_held == h->nr_tick_open)
            return line(h, 'c', (uint32_t)ms, 0);
        if ((rc = flush_tick(h)))
            return rc;
    }
    if (!h->nr_held)
        return line(h, 'c', (uint32_t)ms, 0);
    for (uint32_t i = 0; i < h->nr_held; i++)
        h->held[h->held_list[i]].at_tick = true;
    h->nr_tick_open = h->nr_held;
    h->tick_open = true;
    h->tick_ms = (uint32_t)ms;
    h->buf_heap = false;
    h->last_serial = 0; /* the held "+" lines go out after every line placed */
    return 0;
}

/* The ticks of the period up to an event at ms. */
static int ticks_due(struct heaptrack *h, uint64_t ms)
{
    uint64_t last = ms - ms % HT_TICK_MS;
    int rc = tick(h, h->next_tick);

    if (!rc && last > h->next_tick)
        rc = tick(h, last);
    h->next_tick = last + HT_TICK_MS;
    return rc;
}

/* The info of the block ev ends: on a tree, the one kept with the block
 * (the tables of its stack's image may be gone), else found again from its
 * size and stack. */
static int ended_info(struct heaptrack *h, const struct fmt_event *ev, uint32_t *info)
{
    const struct ht_live *v = h->tree ? ana_map_get(&h->live, ev->ref) : NULL;

    if (!v)
        return info_index(h, ev->ref_size, ev->ref_stack, ev->image, info);
    *info = v->info;
    return 0;
}

static int end_block(struct heaptrack *h, const struct fmt_event *ev, bool temporary)
{
    uint32_t t = ev->ref_thread, info;
    bool held;
    int rc;

    /* Only the allocating thread's held block can be this one. */
    held = t < h->nr_threads && h->held[t].serial == ev->ref;
    if (held && temporary) {
        info = h->held[t].info;
        if (h->held[t].at_tick) {
            if ((rc = line(h, 'T', info, ev->ref)))
                return rc;
            return settle(h, t, true);
        }
        release(h, t);
        if ((rc = line(h, '+', info, ev->ref)))
            return rc;
        return line(h, 'x', info, 0);
    }
    if (held && (rc = unhold(h, t)))
        return rc;
    if ((rc = ended_info(h, ev, &info)))
        return rc;
    /* Its "+" went out at a tick and no +/- line came since. */
    if (temporary && !held && h->last_serial == ev->ref)
        return line(h, 'x', info, 0);
    return line(h, '-', info, 0);
}

static int by_serial(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

    return (a > b) - (a < b);
}

/* A tree's block starts: kept by serial with its info. */
static int track(struct heaptrack *h, const struct fmt_event *ev, uint32_t info)
{
    struct ht_image *im = image_at(h, ev->image);
    struct ht_live *v = im ? ana_map_put(&h->live, ev->serial, NULL) : NULL;

    if (!v)
        return -ENOMEM;
    *v = (struct ht_live){ev->size, info, ev->thread, ev->image};
    im->nr_live++;
    return 0;
}

/* A tree's block ends. */
static void untrack(struct heaptrack *h, uint64_t serial)
{
    const struct ht_live *v = ana_map_get(&h->live, serial);

    if (!v)
        return;
    h->images[v->image].nr_live--;
    ana_map_del(&h->live, serial);
}

/* Before a "+" of a running image: the blocks the ended images left go
 * out, in allocation order, as plain frees. */
static int flush_ended(struct heaptrack *h)
{
    uint32_t n = 0;
    int rc = 0;

    for (size_t i = 0; i < h->live.cap; i++) {
        const struct ht_live *v = ana_map_slot_val(&h->live, i);
        if (!ana_map_slot_key(&h->live, i) || v->image >= h->nr_ended_cap || !h->ended[v->image])
            continue;
        if (UTIL_ARRAY_RESERVE(h->serials, h->cap_serials, (size_t)n + 1, 256))
            return -ENOMEM;
        h->serials[n++] = ana_map_slot_key(&h->live, i);
    }
    qsort(h->serials, n, sizeof(*h->serials), by_serial);
    for (uint32_t i = 0; i < n && !rc; i++) {
        const struct ht_live *v = ana_map_get(&h->live, h->serials[i]);
        struct fmt_event ev = {
            .ref = h->serials[i], .ref_size = v->size, .ref_thread = v->thread, .image = v->image};
        rc = end_block(h, &ev, false);
        untrack(h, h->serials[i]);
    }
    memset(h->ended, 0, h->nr_ended_cap * sizeof(*h->ended));
    h->nr_ended = 0;
    return rc;
}

/* The tables of the images that ended ANA_ENDED_LAG_NS before now go
 * (none of their events is read any more: their stacks went too); their
 * infos wait for their blocks. */
static int drop_due(struct heaptrack *h, uint64_t now_ns)
{
    uint32_t image;
    uint64_t end_ns;

    while (ana_ended_due(&h->gone, now_ns, &image, &end_ns)) {
        struct ht_image *im = &h->images[image];
        ana_map_release(&im->ips);
        ana_map_release(&im->traces);
        ana_map_release(&im->trace_of);
        if (UTIL_ARRAY_RESERVE(h->waiting, h->cap_waiting, (size_t)h->nr_waiting + 1, 16))
            return -ENOMEM;
        h->waiting[h->nr_waiting++] = image;
    }
    free_waiting(h);
    return 0;
}

/* Image `image` has exited at end_ns: its blocks leave heaptrack's total
 * before the next allocation, and (streamed) its tables go a little
 * later. */
static int note_exit(struct heaptrack *h, uint32_t image, uint64_t end_ns)
{
    int rc;

    if (UTIL_ARRAY_RESERVE_ZERO(h->ended, h->nr_ended_cap, (size_t)image + 1, 16))
        return -ENOMEM;
    if (!h->ended[image])
        h->nr_ended++;
    h->ended[image] = true;
    if (!h->drops)
        return 0;
    if ((rc = drop_due(h, end_ns)) || !image_at(h, image))
        return rc ? rc : -ENOMEM;
    return ana_ended_push(&h->gone, image, end_ns);
}

static int heap_event(struct heaptrack *h, const struct fmt_event *ev, const struct ana_step *st)
{
    uint32_t info;
    int rc;

    if (ev->thread >= h->nr_threads && (rc = thread_grow(h, ev->thread)))
        return rc;
    if (ev->ref_thread >= h->nr_threads && (rc = thread_grow(h, ev->ref_thread)))
        return rc;
    h->step++;
    if (h->tree && st->starts && h->nr_ended && (rc = flush_ended(h)))
        return rc;
    /* A sampled trace's blocks are never shown temporary: it does not
     * estimate them (ana_sample.h), and heaptrack_print counts what the
     * order of the lines says. */
    if (st->ends && (rc = end_block(h, ev,
                                    st->temporary == ANA_TEMP_YES &&
                                        ana_sample_has_temporary(fmt_reader_sample_bytes(h->r)))))
        return rc;
    if (h->tree && st->ends)
        untrack(h, ev->ref);
    if (st->starts &&
        ((rc = unhold(h, ev->thread)) ||
         (rc = info_index(h, ev->size, ev->stack, ev->image, &info)) ||
         (h->tree && (rc = track(h, ev, info))) || (rc = hold(h, ev->thread, ev->serial, info))))
        return rc;
    /* A tick at the peak: the chart's top. */
    if (h->step == h->peak_step && (rc = tick(h, h->last_ms)))
        return rc;
    if (h->tick_open && h->nr_buf >= HT_MAX_HELD)
        return flush_tick(h);
    return 0;
}

/* heaptrack's "I" line: the page size and the recording machine's
 * physical memory in pages (heaptrack_gui's "total system memory"). The
 * trace names its host, not its memory: this machine's when the export
 * runs where the trace was recorded, else 0 (unknown). RSS lines count
 * HT_PAGE_SIZE pages, so the memory does too. */
static uint64_t phys_pages(const struct fmt_trace_info *info)
{
    char host[256];
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);

    if (!info->hostname || gethostname(host, sizeof(host)) ||
        strncmp(host, info->hostname, sizeof(host)) || pages <= 0 || page_size <= 0)
        return 0;
    return (uint64_t)pages * (uint64_t)page_size / HT_PAGE_SIZE;
}

static int header(struct heaptrack *h)
{
    const struct fmt_trace_info *info = fmt_reader_info(h->r);

    /* X: the command line, words joined by spaces, escaped (valid UTF-8,
     * no control characters: heaptrack_print shows it as is). */
    char *cmd = info->command && info->command_len
                    ? ana_xtext(info->command, info->command_len, true)
                    : strdup("(unknown)");

    /* A sampled trace: the label leads the command, which heaptrack_print
     * and heaptrack_gui show ("Debuggee command was: ..."), and a comment
     * line (heaptrack skips lines starting with '#') says it too. */
    char label[ANA_SAMPLE_LABEL_SIZE];

    if (!cmd)
        return -ENOMEM;
    ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(h->r));
    int rc = ana_xout_printf(h->out, "v %x %x\n", HEAPTRACK_VERSION_CODE, HEAPTRACK_FILE_VERSION);

    if (!rc && *label)
        rc = ana_xout_printf(h->out, "# %s\nX [%s] %s\n", label, label, cmd);
    else if (!rc)
        rc = ana_xout_printf(h->out, "X %s\n", cmd);
    if (!rc)
        rc = ana_xout_printf(h->out, "I %x %" PRIx64 "\n", HT_PAGE_SIZE, phys_pages(info));

    free(cmd);
    return rc;
}

/* Pass 1: every event, in trace order. */
static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct heaptrack *h = arg;
    uint64_t ms = ev->ts_ns / 1000000;
    int rc;

    if (ms >= h->next_tick && (rc = ticks_due(h, ms)))
        return rc;
    h->last_ms = ms > h->last_ms ? ms : h->last_ms;
    /* Resident memory goes out at once: heaptrack only keeps its maximum. */
    if (ev->kind == FMT_EV_RSS && st->selected)
        return ana_xout_printf(h->out, "R %" PRIx64 "\n", ev->size / HT_PAGE_SIZE);
    if (h->tree && ev->kind == FMT_EV_PROCESS_EXIT && st->selected &&
        ((rc = note_exit(h, ev->image, ev->ts_ns)) ||
         (h->o->image_done && (rc = h->o->image_done(h->o->image_arg, ev->image, ev->ts_ns)))))
        return rc;
    return st->starts || st->ends ? heap_event(h, ev, st) : 0;
}

/* After pass 1, the end: what is still held was allocated and never
 * freed. */
static int finish_stream(struct ana_export_job *job)
{
    struct heaptrack *h = job->state;
    int rc = 0;

    if (h->tick_open && (rc = flush_tick(h)))
        return rc;
    while (h->nr_held && !rc)
        rc = unhold(h, h->held_list[h->nr_held - 1]);
    /* The last tick: the trace's span (heaptrack_print's "total runtime"). */
    if (!rc && h->last_ms > h->last_tick)
        rc = tick(h, h->last_ms);
    if (!rc)
        rc = write_pending(h, false, true);
    return rc ? rc : write_deferred(h, true);
}

/* Pass 0: at which heap event the peak is, and its bytes: the steps'
 * decision, as the export's model takes them (ana_xmodel), without its
 * sites, which heaptrack does not read. */
static int find_peak(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct heaptrack *h = arg;

    (void)ev;
    if (!st->peak)
        return 0;
    h->peak_bytes = st->heap;
    if (st->selected)
        h->peak_step = h->pass0->nr_steps;
    return 0;
}

bool ana_export_heaptrack_streams(const struct fmt_reader *r)
{
    /* Pass 0 reads no stack; pass 1 has read every stack of an image when
     * it exits (its blocks' traces are known from their "+"), so its
     * stacks may go then (ana_export_options.image_done). */
    return fmt_reader_nr_images(r) > 1;
}

/* After pass 0: the peak known. */
static int begin(struct ana_export_job *job)
{
    struct heaptrack *h = job->state;
    int rc = 0;

    if (!(h->sym = ana_xjob_sym(job, &rc)))
        return rc;
    return header(h);
}

static void release_heaptrack(struct ana_export_job *job)
{
    struct heaptrack *h = job->state;

    for (uint32_t i = 0; i < h->nr_images; i++) {
        ana_map_release(&h->images[i].ips);
        ana_map_release(&h->images[i].traces);
        ana_map_release(&h->images[i].trace_of);
        free(h->images[i].infos);
    }
    free(h->images);
    ana_ended_release(&h->gone);
    free(h->waiting);
    free(h->infos);
    free(h->info_hash);
    free(h->held);
    free(h->held_list);
    free(h->pending_ms);
    free(h->settled);
    free(h->buf);
    free(h->ended);
    free(h->serials);
    ana_map_release(&h->live);
    ana_strtab_release(&h->strs);
}

int ana_export_heaptrack(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step}, peak_ops = {.step = find_peak};
    static const struct ana_xjob_hooks hooks = {
        .model_ready = begin, .write = finish_stream, .release = release_heaptrack};
    struct heaptrack *h = ana_xjob_state(job, sizeof(*h), &hooks);
    struct fmt_trace_counts c;
    int rc;

    if (!h)
        return -ENOMEM;
    h->r = job->r;
    h->out = job->out;
    h->o = job->o;
    fmt_reader_counts(job->r, &c);
    h->nr_stacks = c.nr_stacks;
    h->next_tick = HT_TICK_MS;
    h->tree = fmt_reader_nr_images(job->r) > 1;
    /* image_done is set when the output streams (ana_export_streams). */
    h->drops = h->tree && job->o->image_done;
    ana_map_init(&h->live, sizeof(struct ht_live));
    h->pass0 = job->pass[0];
    if ((rc = ana_xjob_subscribe(job, 0, &peak_ops, h)))
        return rc;
    return ana_xjob_subscribe(job, 1, &ops, h);
}
