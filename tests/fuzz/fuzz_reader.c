/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the trace reader: open the input as a trace and use
 * every part of the reader API on it. Built by tests/fuzz/run.sh with
 * clang -fsanitize=fuzzer,address,undefined and
 * -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (checksums are then not
 * checked, so mutations reach the decoders); test_fmt_corpus replays the
 * corpus through the same function in the normal, checked build. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memscribe/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    *(int64_t *)arg += (int64_t)stack + bytes + blocks;
}

static void use_tables(struct fmt_reader *r)
{
    struct fmt_trace_counts c;
    uint64_t frames[64];
    uint32_t image;
    volatile uint64_t acc = 0;

    fmt_reader_counts(r, &c);
    for (uint32_t i = 0; i < fmt_reader_nr_images(r); i++)
        acc += fmt_reader_image(r, i)->exe_len;
    for (uint32_t i = 0; i < fmt_reader_nr_threads(r); i++)
        acc += fmt_reader_thread(r, i)->name_len;
    for (uint32_t i = 0; i < fmt_reader_nr_modules(r); i++) {
        const struct fmt_module_info *m = fmt_reader_module(r, i);
        acc += m->m.path_len;
        acc += (uintptr_t)fmt_reader_find_module(r, m->image, m->m.base);
    }
    /* Stacks: all of a small table, a sample of a big one. */
    for (uint32_t id = 0; id <= c.nr_stacks && id < 5000; id++)
        acc += (uint64_t)fmt_reader_stack(r, id, &image, frames, 64);
    (void)acc;
}

/* Format 1.10's chunk totals: every chunk's, images and stacks (and
 * 1.11's all-processes part, 1.12's programs' parts). */
static int sink_image(void *arg, const struct fmt_image_totals *t)
{
    *(volatile uint64_t *)arg += t->calls[1] + (uint64_t)t->peak + t->rss_max;
    return 0;
}

static int sink_prog(void *arg, const struct fmt_prog_totals *t)
{
    *(volatile uint64_t *)arg += t->first_image + (uint64_t)t->part.peak + t->rss;
    return 0;
}

static int sink_stack(void *arg, const struct fmt_stack_totals *t)
{
    *(volatile uint64_t *)arg += t->allocs + t->temp_bytes;
    return 0;
}

static void use_events(struct fmt_reader *r)
{
    struct fmt_event ev;
    volatile uint64_t acc = 0;
    int64_t live = 0;
    uint32_t nr_chunks = fmt_reader_nr_chunks(r);

    while (fmt_reader_next(r, &ev) > 0) {
        acc += ev.addr + ev.ref_size + ev.str_len + ev.str2_len;
        if (ev.str_len)
            acc += (uint8_t)ev.str[ev.str_len - 1];
        if (ev.str2_len)
            acc += (uint8_t)ev.str2[ev.str2_len - 1];
        if (ev.module)
            acc += ev.module->path_len;
    }
    /* Seeking: the last chunk and a time in the middle; live sums. */
    if (nr_chunks) {
        const struct fmt_chunk_info *ci = fmt_reader_chunk(r, nr_chunks - 1);
        fmt_reader_seek_chunk(r, nr_chunks - 1);
        if (fmt_reader_next(r, &ev) > 0)
            acc += ev.ts_ns;
        fmt_reader_seek_time(r, ci->first_ts_ns / 2);
        if (fmt_reader_next(r, &ev) > 0)
            acc += ev.ts_ns;
        fmt_reader_live_at_chunk(r, nr_chunks, sink, &live);
        for (uint32_t k = 0; k < nr_chunks && fmt_reader_has_totals(r); k++) {
            uint64_t sum = 0;
            fmt_reader_chunk_totals(r, k, sink_image, sink_stack, &sum);
            acc += sum;
            struct fmt_all_totals all;
            if (!fmt_reader_chunk_all_totals(r, k, &all))
                acc += (uint64_t)all.heap + all.peak_ns;
            if (fmt_reader_chunk_prog_totals(r, k, sink_prog, &sum) == 0)
                acc += sum;
        }
        /* A range (fmt_reader_seek_range: a parallel replay's), then every
         * chunk again with its summary held against its events (dump
         * --verify, report --verify). */
        fmt_reader_seek_range(r, nr_chunks / 2, nr_chunks);
        while (fmt_reader_next(r, &ev) > 0)
            acc += ev.stack;
        fmt_reader_verify_summaries(r, 1);
        while (fmt_reader_next(r, &ev) > 0)
            acc += ev.ref_stack;
    }
    (void)acc;
}

/* The stacks left for later (FMT_OPEN_STACKS_LATER): their images from
 * the image table (leaks --index's), the first one's image let go by it
 * before any chunk is read; then read in the order a tree's fold asks
 * (descending here, so the first decodes the rest), the images let go one
 * by one between events, then every stack again (the forgotten ones fail
 * with -ESTALE). */
static void use_stacks_later(struct fmt_reader *r)
{
    struct fmt_trace_counts c;
    struct fmt_event ev;
    uint64_t frames[64];
    uint32_t image = 0, forgot = 0;
    volatile uint64_t acc = 0;

    fmt_reader_counts(r, &c);
    for (uint32_t id = c.nr_stacks < 5000 ? c.nr_stacks : 5000; id > 0; id--)
        acc += (uint64_t)fmt_reader_stack_image(r, id, &image) + image;
    if (!fmt_reader_stack_image(r, 1, &image))
        acc += (uint64_t)fmt_reader_forget_image(r, image);
    for (uint32_t id = c.nr_stacks < 5000 ? c.nr_stacks : 5000; id > 0; id--)
        acc += (uint64_t)fmt_reader_stack(r, id, &image, frames, 64);
    while (fmt_reader_next(r, &ev) > 0) {
        acc += ev.stack;
        if (ev.kind == FMT_EV_PROCESS_EXIT || (ev.serial & 63) == 1)
            acc += (uint64_t)fmt_reader_forget_image(r, forgot++ % (fmt_reader_nr_images(r) + 1));
    }
    for (uint32_t id = 0; id <= c.nr_stacks && id < 5000; id++)
        acc += (uint64_t)fmt_reader_stack(r, id, &image, frames, 64);
    acc += (uint64_t)fmt_reader_load_stacks(r);
    (void)acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    struct fmt_reader *r;
    char err[256];

    if (fd < 0)
        abort();
    if (size && write(fd, data, size) != (ssize_t)size)
        abort();
    if (fmt_reader_open_fd(&r, fd, "fuzz.trace", err, sizeof(err)) == 0) {
        use_tables(r);
        use_events(r);
        fmt_reader_close(r);
    }
    if (fmt_reader_open_fd_flags(&r, fd, "fuzz.trace", FMT_OPEN_STACKS_LATER, err, sizeof(err)) ==
        0) {
        use_stacks_later(r);
        fmt_reader_close(r);
    }
    close(fd);
    return 0;
}
