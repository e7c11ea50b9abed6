/* SPDX-License-Identifier: MIT */
/* The heap of a stopped process copied into the recorder in a few large
 * reads before the leak search (rec_reach_internal.h): a read of a block
 * per ranges of 32 bytes costs the kernel a page walk each, and 4 million
 * blocks took 10 s of process_vm_readv; the same bytes in spans of
 * neighbouring blocks take a fraction of a second (bench/notes/reach.md,
 * "The leak scan against LeakSanitizer"). The search then reads through
 * rec_reach_snap_read, which serves what the copy holds and passes the
 * rest to process_vm_readv. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "recorder/rec_reach_internal.h"
#include "util/util_search.h"

/* Blocks closer than this share a span (the gap is read too: cheaper than
 * one more range). */
#define REC_SNAP_GAP 4096u
#define REC_SNAP_MAX_SPANS 4096u

static ssize_t rec_snap_remote(struct rec_reach_snap *sn, const struct iovec *local,
                               const struct iovec *remote)
{
    return sn->read(sn->read_arg, local, 1, remote, 1);
}

/* Read the spans in batches; a span that faults is dropped from the copy
 * (its reads go to the process, which skips the bad page). */
static void rec_snap_fill(struct rec_reach_snap *sn)
{
    struct iovec local[REC_REACH_IOV], remote[REC_REACH_IOV];

    for (uint32_t b = 0; b < sn->nr_spans; b += REC_REACH_IOV) {
        uint32_t n = sn->nr_spans - b < REC_REACH_IOV ? sn->nr_spans - b : REC_REACH_IOV;
        ssize_t got;
        size_t left;

        for (uint32_t i = 0; i < n; i++) {
            const struct rec_reach_span *s = &sn->spans[b + i];

            local[i] = (struct iovec){sn->mem + s->off, s->hi - s->lo};
            remote[i] = (struct iovec){(void *)(uintptr_t)s->lo, s->hi - s->lo};
        }
        got = sn->read(sn->read_arg, local, n, remote, n);
        left = got < 0 ? 0 : (size_t)got;
        for (uint32_t i = 0; i < n; i++) {
            struct rec_reach_span *s = &sn->spans[b + i];

            if (left >= s->hi - s->lo) {
                left -= s->hi - s->lo;
                s->valid = 1;
                continue;
            }
            /* The batch stopped in this span: read the rest one by one. */
            left = 0;
            s->valid = rec_snap_remote(sn, &local[i], &remote[i]) == (ssize_t)(s->hi - s->lo);
        }
    }
}

int rec_reach_snap_make(struct rec_reach_snap *sn, const struct rec_reach_block *blocks,
                        size_t nr_blocks, size_t max_bytes)
{
    size_t total = 0;

    sn->nr_spans = 0;
    sn->mem = NULL;
    sn->mem_size = 0;
    if (!(sn->spans = malloc(REC_SNAP_MAX_SPANS * sizeof(*sn->spans))))
        return -ENOMEM;
    for (size_t i = 0; i < nr_blocks; i++) {
        uint64_t lo = blocks[i].addr, hi = blocks[i].addr + blocks[i].size;
        struct rec_reach_span *last = sn->nr_spans ? &sn->spans[sn->nr_spans - 1] : NULL;

        if (hi <= lo)
            continue;
        if (last && lo <= last->hi + REC_SNAP_GAP && total + (hi - last->hi) <= max_bytes) {
            if (hi > last->hi) {
                total += hi - last->hi;
                last->hi = hi;
            }
            continue;
        }
        if (sn->nr_spans == REC_SNAP_MAX_SPANS || total + (hi - lo) > max_bytes)
            break; /* the rest is read from the process */
        sn->spans[sn->nr_spans++] = (struct rec_reach_span){.lo = lo, .hi = hi, .off = total};
        total += hi - lo;
    }
    if (!total) {
        sn->nr_spans = 0;
        return 0;
    }
    /* Populated at once: the kernel fills the pages in one call, where
     * the copy faulted them in one by one (MADV_HUGEPAGE was slower here:
     * the kernel compacts memory to find huge pages while the program waits). */
    sn->mem = mmap(NULL, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, -1, 0);
    if (sn->mem == MAP_FAILED) {
        sn->mem = NULL;
        sn->nr_spans = 0;
        return -ENOMEM;
    }
    sn->mem_size = total;
    rec_snap_fill(sn);
    return 0;
}

void rec_reach_snap_free(struct rec_reach_snap *sn)
{
    if (sn->mem)
        munmap(sn->mem, sn->mem_size);
    free(sn->spans);
    sn->spans = NULL;
    sn->mem = NULL;
    sn->nr_spans = 0;
}

/* The span that holds [lo, lo + len) whole, or NULL. */
static const struct rec_reach_span *rec_snap_find(const struct rec_reach_snap *sn, uint64_t lo,
                                                  size_t len)
{
    size_t i = util_search_above(sn->spans, sn->nr_spans, sizeof(*sn->spans),
                                 offsetof(struct rec_reach_span, lo), lo);
    const struct rec_reach_span *s = i ? &sn->spans[i - 1] : NULL;

    return s && s->valid && lo + len <= s->hi ? s : NULL;
}

const unsigned char *rec_reach_snap_view(void *arg, uint64_t addr, size_t len)
{
    struct rec_reach_snap *sn = arg;
    const struct rec_reach_span *s = rec_snap_find(sn, addr, len);

    return s ? sn->mem + s->off + (addr - s->lo) : NULL;
}

ssize_t rec_reach_snap_read(void *arg, const struct iovec *local, unsigned long nr_local,
                            const struct iovec *remote, unsigned long nr_remote)
{
    struct rec_reach_snap *sn = arg;
    size_t done = 0;

    (void)nr_local; /* the search passes pairs: nr_local == nr_remote */
    for (unsigned long i = 0; i < nr_remote; i++) {
        uint64_t lo = (uint64_t)(uintptr_t)remote[i].iov_base;
        const struct rec_reach_span *s = rec_snap_find(sn, lo, remote[i].iov_len);
        ssize_t got;

        if (s) {
            memcpy(local[i].iov_base, sn->mem + s->off + (lo - s->lo), remote[i].iov_len);
            done += remote[i].iov_len;
            continue;
        }
        got = rec_snap_remote(sn, &local[i], &remote[i]);
        if (got < 0)
            return done ? (ssize_t)done : -1;
        done += (size_t)got;
        if ((size_t)got < remote[i].iov_len)
            break;
    }
    return (ssize_t)done;
}
