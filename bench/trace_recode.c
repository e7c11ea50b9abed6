/* SPDX-License-Identifier: MIT */
/* Write a trace's events again with other writer options, so that two
 * encodings are compared on the same events (recording twice changes the
 * times, and with them the size): bench/notes/trace-size.md, "Trace size".
 *
 * usage: trace_recode IN OUT [TIME_UNIT_NS [CHUNK_EVENTS [ZSTD_LEVEL [FORMAT]]]]
 *   TIME_UNIT_NS  1 (default): nanoseconds, a 1.1 file; more: format 1.3
 *   FORMAT        13 (default with a time unit), 14: packed times, 15: also recent
 *                 addresses and ranked references (ZSTD_LEVEL 0: level 5 where it pays),
 *                 16: also predicted realloc addresses and class tops, 110: also
 *                 each chunk's totals (format 1.10)
 * Prints the events written and OUT's size. Exit 1 on any error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/fmt_writer.h"
#include "memscribe/trace.h"

#define MAX_FRAMES 4096

static int fail(const char *what, const char *path, int rc)
{
    fprintf(stderr, "trace_recode: %s: %s: %s\n", path, what, strerror(rc < 0 ? -rc : rc));
    return 1;
}

/* The writer's id of the reader's stack id (interned on first use). */
static int map_stack(struct fmt_reader *r, struct fmt_writer *w, uint32_t *ids, uint32_t id,
                     uint32_t *out)
{
    static uint64_t frames[MAX_FRAMES];
    uint32_t image;

    if (!id || ids[id]) {
        *out = id ? ids[id] : 0;
        return 0;
    }
    int n = fmt_reader_stack(r, id, &image, frames, MAX_FRAMES);
    if (n < 0 || n > MAX_FRAMES)
        return n < 0 ? n : -E2BIG;
    int rc = fmt_writer_stack(w, image, frames, (uint32_t)n, &ids[id]);
    *out = ids[id];
    return rc;
}

int main(int argc, char **argv)
{
    struct fmt_writer_options opt = {0};
    struct fmt_reader *r;
    struct fmt_writer *w;
    struct fmt_trace_counts c;
    struct fmt_writer_stats st;
    struct fmt_event ev;
    char err[1024];
    int rc;

    if (argc < 3 || argc > 7) {
        fprintf(stderr, "usage: trace_recode IN OUT [TIME_UNIT_NS [CHUNK_EVENTS [ZSTD_LEVEL "
                        "[FORMAT]]]]\n");
        return 2;
    }
    opt.time_unit_ns = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1;
    opt.chunk_events = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0;
    opt.zstd_level = argc > 5 ? atoi(argv[5]) : 0;
    opt.time_pack = argc > 6 && atoi(argv[6]) >= 14;
    opt.free_ranks = argc > 6 && atoi(argv[6]) >= 15;
    opt.realloc_pred = argc > 6 && atoi(argv[6]) >= 16;
    opt.totals = argc > 6 && atoi(argv[6]) >= 110;
    if (fmt_reader_open(&r, argv[1], err, sizeof(err))) {
        fprintf(stderr, "trace_recode: %s\n", err);
        return 1;
    }
    fmt_reader_counts(r, &c);
    uint32_t *ids = calloc((size_t)c.nr_stacks + 1, sizeof(*ids));
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (!ids || fd < 0)
        return fail("cannot create", argv[2], errno);
    struct fmt_trace_info info = *fmt_reader_info(r);
    opt.aggregate = info.aggregate_ns != 0; /* an aggregated trace stays one (format 1.8) */
    if ((rc = fmt_writer_create(&w, fd, &info, &opt)))
        return fail("cannot start the trace", argv[2], rc);
    while ((rc = fmt_reader_next(r, &ev)) == 1) {
        if ((rc = map_stack(r, w, ids, ev.stack, &ev.stack)))
            return fail("cannot intern a stack", argv[2], rc);
        if ((rc = fmt_writer_event(w, &ev)))
            return fail("cannot write an event", argv[2], rc);
    }
    if (rc < 0) {
        fprintf(stderr, "trace_recode: %s\n", fmt_reader_error(r));
        return 1;
    }
    if ((rc = fmt_writer_finish(w)))
        return fail("cannot finish the trace", argv[2], rc);
    fmt_writer_get_stats(w, &st);
    printf("%s: %llu events, %llu bytes, %.3f bytes/event\n", argv[2],
           (unsigned long long)st.nr_events, (unsigned long long)st.bytes_written,
           st.nr_events ? (double)st.bytes_written / (double)st.nr_events : 0.0);
    fmt_writer_destroy(w);
    fmt_reader_close(r);
    free(ids);
    return close(fd) ? fail("cannot close", argv[2], errno) : 0;
}
