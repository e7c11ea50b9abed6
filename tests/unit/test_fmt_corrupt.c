/* SPDX-License-Identifier: MIT */
/* Truncated and corrupt traces: a truncated trace reads up to its last
 * whole chunk and says it is incomplete; a corrupt one gives -EPROTO and a
 * message naming the file, the offset and the problem; nothing crashes.
 *
 * With MS_FMT_WRITE_CORPUS=DIR set, every malformed file built here is also
 * written to DIR (that is how tests/fuzz/corpus was seeded). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "format/fmt_block_internal.h"
#include "format/fmt_buf_internal.h"
#include "format/fmt_crc_internal.h"
#include "format/fmt_layout_internal.h"
#include "format/fmt_pred_internal.h"
#include "test_fmt_util.h"
#include "test_xorshift.h"

static uint64_t rng_state = 0x1234567;
static uint64_t rnd(void)
{
    return test_xorshift64(&rng_state);
}

static void save_corpus(const char *name, const uint8_t *p, size_t n)
{
    const char *dir = getenv("MS_FMT_WRITE_CORPUS");
    char path[512];

    if (!dir)
        return;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* Read with fmt_reader_verify_summaries() on. */
static int read_verify;

/* Read the whole trace in memory: returns 0 and the event count, or the
 * error of open or next with its message in err. */

/* The same bytes opened with the stacks left for later: what the open
 * refused for its stacks is refused when they are decoded, never
 * accepted (an open that succeeds does alike). */
static void later_agrees(const uint8_t *p, size_t n, int open_rc)
{
    int fd = tfmt_memfd(p, n);
    struct fmt_reader *r;
    char err[512];
    int rc = fmt_reader_open_fd_flags(&r, fd, "bad.trace", FMT_OPEN_STACKS_LATER, err, sizeof(err));

    if (!rc) {
        rc = fmt_reader_load_stacks(r);
        fmt_reader_close(r);
    }
    close(fd);
    if (open_rc)
        assert_int_not_equal(rc, 0);
    else
        assert_int_equal(rc, 0);
}

static int read_all(const uint8_t *p, size_t n, uint64_t *nr, int *incomplete, char *err,
                    size_t err_size, struct fmt_event *evs, size_t max)
{
    int fd = tfmt_memfd(p, n);
    struct fmt_reader *r;
    struct fmt_event ev;
    int rc = fmt_reader_open_fd(&r, fd, "bad.trace", err, err_size);

    *nr = 0;
    later_agrees(p, n, rc);
    if (rc) {
        close(fd);
        return rc;
    }
    *incomplete = fmt_reader_incomplete(r);
    if (read_verify)
        fmt_reader_verify_summaries(r, 1);
    while ((rc = fmt_reader_next(r, &ev)) > 0) {
        if (evs && *nr < max)
            evs[*nr] = ev;
        (*nr)++;
    }
    if (rc < 0)
        snprintf(err, err_size, "%s", fmt_reader_error(r));
    /* The tables and seeking must be safe on whatever opened. */
    struct fmt_trace_counts c;
    fmt_reader_counts(r, &c);
    for (uint32_t k = 0; k < c.nr_chunks; k++) {
        const struct fmt_chunk_info *ci = fmt_reader_chunk(r, k);
        assert_non_null(ci);
    }
    fmt_reader_close(r);
    close(fd);
    return rc;
}

/* A trace with several chunks, and where its blocks start. */
struct sample {
    uint8_t *bytes;
    size_t size;
    uint64_t block_off[256];
    uint16_t block_type[256];
    uint32_t nr_blocks;
    uint32_t chunk_events;
    uint64_t nr_events;
};

static void make_sample(struct sample *s)
{
    struct tfmt t;
    uint32_t stack;
    uint64_t frames[3] = {0x401000, 0x402000, 0x403000};

    memset(s, 0, sizeof(*s));
    s->chunk_events = 40;
    tfmt_start(&t, s->chunk_events);
    assert_int_equal(fmt_writer_stack(t.w, 0, frames, 3, &stack), 0);
    uint64_t live[16] = {0};
    for (uint32_t i = 0; i < 400; i++) {
        struct fmt_event ev = {0};
        uint32_t slot = (uint32_t)(rnd() % 16);
        ev.ts_ns = 100 + i * 10;
        ev.pid = 7;
        ev.tid = 7 + i % 2;
        ev.thread = i % 2;
        ev.stack = stack;
        if (live[slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = live[slot];
            live[slot] = 0;
        } else {
            ev.kind = FMT_EV_MALLOC;
            ev.addr = 0x10000 + slot * 0x100;
            ev.size = 1 + rnd() % 200;
            live[slot] = ev.addr;
        }
        if (i % 37 == 0) {
            uint64_t f2[2] = {0x405000 + i, 0x402000};
            assert_int_equal(fmt_writer_stack(t.w, 0, f2, 2, &ev.stack), 0);
        }
        assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    }
    s->nr_events = 400;
    tfmt_finish(&t);
    s->bytes = tfmt_bytes(t.fd, &s->size);
    tfmt_close(&t);

    /* Walk the block headers. */
    uint64_t off = FMT_HEADER_SIZE;
    while (off + FMT_BLOCK_HEADER_SIZE <= s->size - FMT_TRAILER_SIZE) {
        struct fmt_block_hdr h;
        const char *why;
        assert_int_equal(fmt_block_parse(s->bytes + off, &h, &why), 0);
        assert_true(s->nr_blocks < 256);
        s->block_off[s->nr_blocks] = off;
        s->block_type[s->nr_blocks++] = h.type;
        off += FMT_BLOCK_HEADER_SIZE + h.stored_size;
    }
    assert_int_equal(off, s->size - FMT_TRAILER_SIZE);
}

/* Events a file cut at len must still give: those of every chunk whose
 * DEFS block is whole. */
static uint64_t events_before(const struct sample *s, uint64_t len)
{
    uint64_t n = 0;

    for (uint32_t b = 0; b + 1 < s->nr_blocks; b++) {
        if (s->block_type[b] != FMT_BLOCK_CHUNK)
            continue;
        uint64_t defs_end = b + 2 < s->nr_blocks ? s->block_off[b + 2] : s->size - FMT_TRAILER_SIZE;
        if (defs_end <= len)
            n += s->chunk_events;
    }
    return n > s->nr_events ? s->nr_events : n;
}

static void check_cut(const struct sample *s, const struct fmt_event *all, uint64_t len)
{
    uint64_t nr;
    int incomplete = 0;
    char err[600] = "";
    struct fmt_event *evs = calloc(s->nr_events, sizeof(*evs));
    int rc = read_all(s->bytes, len, &nr, &incomplete, err, sizeof(err), evs, s->nr_events);

    assert_non_null(evs);
    if (len < FMT_HEADER_SIZE) {
        assert_int_equal(rc, -EPROTO);
        assert_non_null(strstr(err, "bad.trace"));
        free(evs);
        return;
    }
    if (rc)
        fail_msg("cut at %llu: %s", (unsigned long long)len, err);
    assert_int_equal(incomplete, len != s->size);
    assert_int_equal(nr, events_before(s, len));
    for (uint64_t i = 0; i < nr; i++)
        tfmt_assert_event(&all[i], &evs[i], i);
    free(evs);
}

/* Cut at every block boundary, one byte either side, and at random offsets:
 * always a valid, incomplete prefix. */
static void test_truncation(void **state)
{
    struct sample s;
    uint64_t nr;
    int incomplete;
    char err[600];

    (void)state;
    make_sample(&s);
    struct fmt_event *all = calloc(s.nr_events, sizeof(*all));
    assert_non_null(all);
    assert_int_equal(
        read_all(s.bytes, s.size, &nr, &incomplete, err, sizeof(err), all, s.nr_events), 0);
    assert_int_equal(nr, s.nr_events);
    assert_false(incomplete);

    for (uint32_t b = 0; b < s.nr_blocks; b++) {
        check_cut(&s, all, s.block_off[b]);
        check_cut(&s, all, s.block_off[b] + 1);
        check_cut(&s, all, s.block_off[b] - 1);
        check_cut(&s, all, s.block_off[b] + FMT_BLOCK_HEADER_SIZE);
    }
    for (uint64_t len = s.size - FMT_TRAILER_SIZE - 1; len <= s.size; len++)
        check_cut(&s, all, len);
    for (int i = 0; i < 300; i++)
        check_cut(&s, all, rnd() % s.size);
    for (uint64_t len = 0; len <= FMT_HEADER_SIZE; len += 7)
        check_cut(&s, all, len);

    /* A zero-filled tail (a crash after the file grew) is truncation too. */
    uint8_t *z = calloc(1, s.size + 4096);
    memcpy(z, s.bytes, s.block_off[5]);
    uint64_t tail = s.block_off[5] + 4096;
    assert_int_equal(read_all(z, tail, &nr, &incomplete, err, sizeof(err), NULL, 0), 0);
    assert_true(incomplete);
    save_corpus("truncated-zero-tail", z, tail);
    save_corpus("truncated-mid-chunk", s.bytes, s.block_off[4] + 30);
    save_corpus("complete", s.bytes, s.size);
    free(z);
    free(all);
    free(s.bytes);
}

/* A full disk (here: RLIMIT_FSIZE, which cuts writes short just like it):
 * the writer says so and stops; the file reads as an incomplete prefix. */
static void test_disk_full(void **state)
{
    (void)state;
    for (int limit = 200; limit < 40000; limit = limit * 3 / 2) {
        char path[] = "/tmp/test_fmt_full.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl))
                _exit(3);
            struct fmt_trace_info info = {0};
            struct fmt_writer_options opt = {.chunk_events = 50};
            struct fmt_writer *w;
            int rc = fmt_writer_create(&w, fd, &info, &opt);
            for (uint32_t i = 0; !rc && i < 100000; i++) {
                struct fmt_event ev = {0};
                ev.kind = i % 2 ? FMT_EV_FREE : FMT_EV_MALLOC;
                ev.ts_ns = i * 100;
                ev.addr = 0x1000 + (i / 2 % 64) * 0x40;
                ev.size = i % 2 ? 0 : 1 + (uint64_t)((i * 2654435761u) % 4000);
                rc = fmt_writer_event(w, &ev);
            }
            if (!rc)
                rc = fmt_writer_finish(w);
            /* The error is sticky: nothing more is written after it. */
            int again = rc ? fmt_writer_finish(w) : rc;
            if (!rc || rc != -EFBIG || again != rc)
                _exit(4);
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        size_t size;
        uint8_t *p = tfmt_bytes(fd, &size);
        assert_true(size <= (size_t)limit);
        uint64_t nr;
        int incomplete = 0;
        char err[600] = "";
        int rc = read_all(p, size, &nr, &incomplete, err, sizeof(err), NULL, 0);
        if (size < FMT_HEADER_SIZE) {
            assert_int_equal(rc, -EPROTO);
        } else {
            if (rc)
                fail_msg("limit %d: %s", limit, err);
            assert_true(incomplete);
            assert_int_equal(nr % 50, 0); /* whole chunks only */
        }
        free(p);
        close(fd);
        unlink(path);
    }
}

/* Flip single bits all over: an error that names the file, or (a flip in
 * the trailer's magic) a valid read; never a crash. */
static void test_bit_flips(void **state)
{
    struct sample s;
    char err[600];
    uint64_t nr;
    int incomplete, nr_errors = 0;

    (void)state;
    make_sample(&s);
    uint8_t *copy = malloc(s.size);
    for (int i = 0; i < 2000; i++) {
        uint64_t pos = i < 64 ? (uint64_t)i : rnd() % s.size;
        memcpy(copy, s.bytes, s.size);
        copy[pos] ^= (uint8_t)(1u << (rnd() % 8));
        err[0] = 0;
        int rc = read_all(copy, s.size, &nr, &incomplete, err, sizeof(err), NULL, 0);
        if (rc) {
            assert_int_equal(rc, -EPROTO);
            assert_non_null(strstr(err, "bad.trace: offset "));
            nr_errors++;
        } else {
            /* Only a damaged trailer magic reads as a (valid, truncated) file. */
            assert_true(pos >= s.size - FMT_TRAILER_SIZE && pos < s.size - FMT_TRAILER_SIZE + 8);
            assert_true(incomplete);
            assert_int_equal(nr, s.nr_events);
        }
        if (i == 100)
            save_corpus("bitflip", copy, s.size);
    }
    assert_true(nr_errors > 1900);
    free(copy);
    free(s.bytes);
}

/* A bad CRC in a chunk is found when the chunk is decoded, and names it. */
static void test_bad_chunk_crc(void **state)
{
    struct sample s;
    char err[600];
    uint64_t nr;
    int incomplete;

    (void)state;
    make_sample(&s);
    uint32_t b = 0;
    while (s.block_type[b] != FMT_BLOCK_CHUNK || b < 4)
        b++;
    s.bytes[s.block_off[b] + FMT_BLOCK_HEADER_SIZE + 3] ^= 0x40;
    assert_int_equal(read_all(s.bytes, s.size, &nr, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    char want[128];
    snprintf(want, sizeof(want), "bad.trace: offset %llu: bad CRC",
             (unsigned long long)s.block_off[b]);
    assert_non_null(strstr(err, want));
    uint64_t before = 0; /* the chunks before it were fine */
    for (uint32_t i = 0; i < b; i++)
        before += s.block_type[i] == FMT_BLOCK_CHUNK ? s.chunk_events : 0;
    assert_int_equal(nr, before);

    /* The error stays until a seek; past the bad chunk, reading goes on. */
    int fd = tfmt_memfd(s.bytes, s.size);
    struct fmt_reader *r;
    struct fmt_event ev;
    assert_int_equal(fmt_reader_open_fd(&r, fd, "bad.trace", err, sizeof(err)), 0);
    uint32_t bad_chunk = (uint32_t)(before / s.chunk_events);
    assert_int_equal(fmt_reader_seek_chunk(r, bad_chunk), 0);
    assert_int_equal(fmt_reader_next(r, &ev), -EPROTO);
    assert_int_equal(fmt_reader_next(r, &ev), -EPROTO);
    assert_int_equal(fmt_reader_seek_chunk(r, bad_chunk + 1), 0);
    assert_int_equal(fmt_reader_next(r, &ev), 1);
    fmt_reader_close(r);
    close(fd);
    save_corpus("bad-chunk-crc", s.bytes, s.size);
    free(s.bytes);
}

/* Hand-built traces: blocks with valid CRCs around payloads that lie. */
struct craft {
    struct fmt_buf b;
    uint32_t seq;
    uint64_t dir_prev;
    struct fmt_buf dir;
};

/* The header's feature bits of crafted traces (format 1.0 unless a test
 * says otherwise). */
static uint64_t craft_features = FMT_FEAT_ZSTD_COLUMNS;

static void craft_start(struct craft *c)
{
    struct fmt_trace_info info = {0};
    uint8_t hdr[FMT_HEADER_SIZE];

    memset(c, 0, sizeof(*c));
    info.start_monotonic_ns = 1;
    fmt_header_encode(hdr, &info, craft_features);
    assert_int_equal(fmt_buf_add_bytes(&c->b, hdr, sizeof(hdr)), 0);
}

static void craft_block(struct craft *c, uint16_t type, const void *p, size_t n)
{
    struct fmt_block_hdr h = {type, 0, (uint32_t)n, (uint32_t)n, c->seq++, 0};
    uint8_t hb[FMT_BLOCK_HEADER_SIZE];

    fmt_block_encode(hb, &h, p);
    assert_int_equal(fmt_buf_add_varint(&c->dir, type), 0);
    assert_int_equal(fmt_buf_add_varint(&c->dir, c->b.len - c->dir_prev), 0);
    assert_int_equal(fmt_buf_add_varint(&c->dir, n), 0);
    c->dir_prev = c->b.len;
    assert_int_equal(fmt_buf_add_bytes(&c->b, hb, sizeof(hb)), 0);
    assert_int_equal(fmt_buf_add_bytes(&c->b, p, n), 0);
}

/* Index and trailer, so the file is complete. */
static void craft_end(struct craft *c)
{
    struct fmt_buf p = {0};
    uint64_t index_off = c->b.len;
    uint32_t nr = c->seq;

    assert_int_equal(fmt_buf_add_varint(&p, nr), 0);
    assert_int_equal(fmt_buf_add_bytes(&p, c->dir.data, c->dir.len), 0);
    craft_block(c, FMT_BLOCK_INDEX, p.data, p.len);
    uint8_t tr[FMT_TRAILER_SIZE];
    fmt_trailer_encode(tr, index_off, nr);
    assert_int_equal(fmt_buf_add_bytes(&c->b, tr, sizeof(tr)), 0);
    fmt_buf_free(&p);
}

static void craft_free(struct craft *c)
{
    fmt_buf_free(&c->b);
    fmt_buf_free(&c->dir);
}

/* Varint helpers for building payloads. */
static void v(struct fmt_buf *b, uint64_t x)
{
    assert_int_equal(fmt_buf_add_varint(b, x), 0);
}

static void rec(struct fmt_buf *b, uint64_t type, const struct fmt_buf *body)
{
    v(b, type);
    v(b, body->len);
    assert_int_equal(fmt_buf_add_bytes(b, body->data, body->len), 0);
}

/* A DEFS payload: one context (image 0, thread 0, pid 5, tid 5), nr_nodes
 * stack nodes, and the summary of chunk 0. */
static void defs_payload(struct fmt_buf *p, uint32_t nr_nodes, uint64_t nev, uint64_t nr_serials)
{
    struct fmt_buf body = {0};

    if (nr_nodes) {
        v(&body, 1);
        v(&body, nr_nodes);
        for (uint32_t i = 0; i < nr_nodes; i++) {
            v(&body, 0);
            v(&body, 0);
            v(&body, 0x1000 + i);
        }
        rec(p, FMT_DEF_STACKS, &body);
        body.len = 0;
    }
    v(&body, 1);
    v(&body, 0);
    v(&body, 0);
    v(&body, 5);
    v(&body, 5);
    v(&body, 10);
    rec(p, FMT_DEF_CONTEXT, &body);
    body.len = 0;
    v(&body, 0);  /* chunk 0 */
    v(&body, 10); /* first ts */
    v(&body, 5);  /* span */
    v(&body, 1);  /* first serial */
    v(&body, nev);
    v(&body, nr_serials);
    v(&body, nr_serials);
    v(&body, 0);
    v(&body, 0); /* no deltas */
    rec(p, FMT_DEF_SUMMARY, &body);
    fmt_buf_free(&body);
}

struct col {
    int id;
    const uint8_t *p;
    size_t n;
};

/* A CHUNK payload with raw columns. */
static void chunk_payload(struct fmt_buf *p, uint64_t nev, const struct col *cols, int nr)
{
    v(p, 0);
    v(p, nev);
    v(p, 1);
    v(p, 10);
    v(p, (uint64_t)nr);
    for (int i = 0; i < nr; i++) {
        v(p, (uint64_t)cols[i].id);
        v(p, FMT_COL_ENC_RAW);
        v(p, cols[i].n);
        v(p, cols[i].n);
    }
    for (int i = 0; i < nr; i++)
        assert_int_equal(fmt_buf_add_bytes(p, cols[i].p, cols[i].n), 0);
}

/* Events a crafted trace that reads fine must give (-1: any). */
static int64_t crafted_want_events = -1;

/* Build header + META + CHUNK + DEFS (+ index and trailer), read it, and
 * expect the message to hold want (NULL: expect success). */
static void crafted(const char *name, uint32_t nr_nodes, uint64_t nev, uint64_t nr_serials,
                    const struct col *cols, int nr, const char *want)
{
    struct craft c;
    struct fmt_buf chunk = {0}, defs = {0};
    char err[600] = "";
    uint64_t n;
    int incomplete;

    craft_start(&c);
    craft_block(&c, FMT_BLOCK_META, "", 0);
    chunk_payload(&chunk, nev, cols, nr);
    craft_block(&c, FMT_BLOCK_CHUNK, chunk.data, chunk.len);
    defs_payload(&defs, nr_nodes, nev, nr_serials);
    craft_block(&c, FMT_BLOCK_DEFS, defs.data, defs.len);
    craft_end(&c);
    int rc = read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0);
    if (!want) {
        if (rc)
            fail_msg("%s: %s", name, err);
        if (crafted_want_events >= 0)
            assert_int_equal(n, crafted_want_events);
        crafted_want_events = -1;
    } else {
        assert_int_equal(rc, -EPROTO);
        if (!strstr(err, want) || !strstr(err, "bad.trace: offset "))
            fail_msg("%s: want '%s' in '%s'", name, want, err);
    }
    save_corpus(name, c.b.data, c.b.len);
    craft_free(&c);
    fmt_buf_free(&chunk);
    fmt_buf_free(&defs);
}

static void test_crafted_events(void **state)
{
    (void)state;
    /* A malloc: op, time, ctx, size, addr (zigzag difference to the
     * prediction, 0), stack (zigzag difference to 0: 2 is stack 1). */
    static const uint8_t op_malloc[] = {FMT_EV_MALLOC | FMT_OP_CTX};
    static const uint8_t zero[] = {0};
    static const uint8_t one[] = {1};
    static const uint8_t two[] = {2};
    static const uint8_t ten[] = {10};
    static const uint8_t addr[] = {0x80, 0x02}; /* zigzag 256 = 128 */
    static const uint8_t size[] = {24};
    struct col ok[] = {{FMT_COL_OP, op_malloc, 1}, {FMT_COL_TIME, zero, 1},
                       {FMT_COL_CTX, one, 1},      {FMT_COL_SIZE, size, 1},
                       {FMT_COL_ADDR, addr, 2},    {FMT_COL_STACK, two, 1}};
    crafted_want_events = 1;
    crafted("crafted-ok", 1, 1, 1, ok, 6, NULL);
    /* Its summary names no stack's change: read on trust it passes, held
     * against the events (dump --verify, the index's check) it fails. */
    read_verify = 1;
    crafted("summary-mismatch", 1, 1, 1, ok, 6,
            "chunk 0's summary does not match its events: stack 1's live heap is off by 24 "
            "bytes in 1 blocks");
    read_verify = 0;

    struct col c1[6];
    memcpy(c1, ok, sizeof(ok));
    c1[5].p = ten;
    crafted("unknown-stack", 1, 1, 1, c1, 6, "reference to an unknown stack");

    memcpy(c1, ok, sizeof(ok));
    c1[2].p = two;
    crafted("unknown-thread", 1, 1, 1, c1, 6, "unknown thread context");

    /* Ten bytes whose last carries more than the 64th bit. */
    static const uint8_t badvar[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    memcpy(c1, ok, sizeof(ok));
    c1[1].p = badvar;
    c1[1].n = sizeof(badvar);
    crafted("bad-varint", 1, 1, 1, c1, 6, "field runs past the end of its column");

    /* More bytes than one event can put in a column: refused before it is
     * decompressed. */
    static const uint8_t eleven[11] = {0};
    memcpy(c1, ok, sizeof(ok));
    c1[1].p = eleven;
    c1[1].n = sizeof(eleven);
    crafted("column-too-big", 1, 1, 1, c1, 6, "bad column 1 in chunk header");

    memcpy(c1, ok, sizeof(ok));
    c1[3].n = 0; /* no size */
    crafted("short-column", 1, 1, 1, c1, 6, "field runs past the end of its column");

    static const uint8_t size2[] = {24, 7};
    memcpy(c1, ok, sizeof(ok));
    c1[3].p = size2;
    c1[3].n = 2;
    crafted("leftover", 1, 1, 1, c1, 6, "bytes left over");

    /* Format 1.1 addresses: the escape code and the address (256) as is;
     * code 5 names the fifth most recently freed address of the class, and
     * none was freed; an escape without its address. */
    craft_features = FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_ADDR_CANDS;
    static const uint8_t escape[] = {FMT_PRED_ADDR_ESCAPE, 0x80, 0x02};
    static const uint8_t five[] = {5};
    memcpy(c1, ok, sizeof(ok));
    c1[4].p = escape;
    c1[4].n = 3;
    crafted("addr-escape", 1, 1, 1, c1, 6, NULL);
    c1[4].n = 1;
    crafted("addr-escape-short", 1, 1, 1, c1, 6, "field runs past the end of its column");
    c1[4].p = five;
    crafted("addr-no-freed", 1, 1, 1, c1, 6, "bad address code");
    static const uint8_t unused[] = {100};
    c1[4].p = unused;
    crafted("addr-unused-code", 1, 1, 1, c1, 6, "bad address code");
    craft_features = FMT_FEAT_ZSTD_COLUMNS;

    crafted("summary-serials", 1, 1, 0, ok, 6, "more blocks than the chunk summary says");
    crafted("summary-events", 1, 2, 1, ok, 6, "op column holds 1 events, chunk says 2");

    /* A free referring to a block before the first. */
    static const uint8_t op_free[] = {FMT_EV_FREE | FMT_OP_CTX};
    static const uint8_t ref3[] = {3};
    struct col fr[] = {{FMT_COL_OP, op_free, 1},
                       {FMT_COL_FREE_TIME, zero, 1},
                       {FMT_COL_CTX, one, 1},
                       {FMT_COL_REF, ref3, 1},
                       {FMT_COL_FREE_STACK, zero, 1}};
    crafted("ref-before-first", 0, 1, 0, fr, 5, "reference before the first block");
    static const uint8_t ref2[] = {2};
    fr[3].p = ref2;
    crafted("ref-thread-empty", 0, 1, 0, fr, 5, "reference past the thread's first block");

    /* Format 1.5 (FREE_RANKS): rank 0 of the thread's live blocks, none
     * live; a block of the chunk 1 serial back, before its first; a block
     * of an earlier chunk at the chunk's first serial; a recently ended
     * address (code 66, rank 0 in ADDR_REC) when none ended. */
    craft_features = FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_ADDR_CANDS | FMT_FEAT_FREE_RANKS;
    fr[3].p = ref2;
    crafted("ref-rank-none", 0, 1, 0, fr, 5, "reference past the thread's live blocks");
    static const uint8_t ref5[] = {5};
    fr[3].p = ref5;
    crafted("ref-chunk-before", 0, 1, 0, fr, 5, "reference before the chunk's first block");
    fr[3].p = ref3;
    crafted("ref-fact-range", 0, 1, 0, fr, 5, "reference to an earlier chunk's block out of range");
    static const uint8_t recent[] = {FMT_PRED_ADDR_RECENT};
    struct col rc1[7];
    memcpy(rc1, ok, sizeof(ok));
    rc1[4].p = recent;
    rc1[4].n = 1;
    rc1[6] = (struct col){FMT_COL_ADDR_REC, zero, 1};
    crafted("addr-recent-none", 1, 1, 1, rc1, 7, "bad address code");
    craft_features = FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_ADDR_CANDS;
    crafted("addr-recent-no-bit", 1, 1, 1, rc1, 6, "bad address code");
    craft_features = FMT_FEAT_ZSTD_COLUMNS;

    static const uint8_t op_bad[] = {22 | FMT_OP_CTX};
    memcpy(c1, ok, sizeof(ok));
    c1[0].p = op_bad;
    crafted("unknown-kind", 1, 1, 1, c1, 6, "unknown event kind");

    /* An event of a kind from a later version (the escape, kind 63) is
     * skipped by its length; the malloc after it comes through. */
    static const uint8_t op_esc[] = {FMT_OP_KIND_ESCAPE | FMT_OP_CTX, FMT_EV_MALLOC};
    static const uint8_t zero2[] = {0, 0};
    static const uint8_t esc_misc[] = {70, 2, 9, 9};
    struct col esc[] = {{FMT_COL_OP, op_esc, 2},    {FMT_COL_TIME, zero2, 2},
                        {FMT_COL_CTX, one, 1},      {FMT_COL_SIZE, size, 1},
                        {FMT_COL_ADDR, addr, 2},    {FMT_COL_STACK, two, 1},
                        {FMT_COL_MISC, esc_misc, 4}};
    crafted_want_events = 1;
    crafted("future-kind", 1, 2, 1, esc, 7, NULL);
    static const uint8_t esc_short[] = {70, 5, 9, 9};
    esc[6].p = esc_short;
    crafted("future-kind-short", 1, 2, 1, esc, 7, "bad escaped event");

    /* Two columns with the same id. */
    struct col dup[7];
    memcpy(dup, ok, sizeof(ok));
    dup[6] = ok[5];
    crafted("duplicate-column", 1, 1, 1, dup, 7, "appears twice");
}

/* Damage to the framing itself. */
static void test_crafted_framing(void **state)
{
    struct craft c;
    char err[600];
    uint64_t n;
    int incomplete;

    (void)state;
    /* Bad magic, with data after it: corruption, not truncation. */
    craft_start(&c);
    craft_block(&c, FMT_BLOCK_META, "", 0);
    static const uint8_t junk[64] = {1, 2, 3};
    assert_int_equal(fmt_buf_add_bytes(&c.b, junk, sizeof(junk)), 0);
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad.trace: offset 88: bad block magic"));
    save_corpus("bad-block-magic", c.b.data, c.b.len);
    craft_free(&c);

    /* An impossible size. */
    craft_start(&c);
    uint8_t hb[FMT_BLOCK_HEADER_SIZE];
    struct fmt_block_hdr h = {FMT_BLOCK_DEFS, 0, 0, 0, 0, 0};
    fmt_block_encode(hb, &h, "");
    fmt_put_le32(hb + 8, 0xfffffff0u); /* sizes are checked before the CRC */
    fmt_put_le32(hb + 12, 0xfffffff0u);
    assert_int_equal(fmt_buf_add_bytes(&c.b, hb, sizeof(hb)), 0);
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad.trace: offset 64: impossible block size"));
    save_corpus("impossible-size", c.b.data, c.b.len);
    craft_free(&c);

    /* A tiny file whose definitions would decompress to megabytes: refused
     * before they are inflated. */
    craft_start(&c);
    {
        size_t raw = 4u << 20;
        uint8_t *zeros = calloc(1, raw);
        size_t bound = ZSTD_compressBound(raw);
        uint8_t *z = malloc(bound);
        assert_non_null(zeros);
        assert_non_null(z);
        size_t zn = ZSTD_compress(z, bound, zeros, raw, 1);
        assert_false(ZSTD_isError(zn));
        struct fmt_block_hdr zh = {
            FMT_BLOCK_DEFS, FMT_BLOCKF_ZSTD, (uint32_t)zn, (uint32_t)raw, 0, 0};
        uint8_t zhb[FMT_BLOCK_HEADER_SIZE];
        fmt_block_encode(zhb, &zh, z);
        assert_int_equal(fmt_buf_add_bytes(&c.b, zhb, sizeof(zhb)), 0);
        assert_int_equal(fmt_buf_add_bytes(&c.b, z, zn), 0);
        free(zeros);
        free(z);
    }
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad.trace: offset 64: implausibly many definitions"));
    save_corpus("defs-bomb", c.b.data, c.b.len);
    craft_free(&c);

    /* Blocks out of sequence. */
    craft_start(&c);
    craft_block(&c, FMT_BLOCK_META, "", 0);
    c.seq = 5;
    craft_block(&c, FMT_BLOCK_META, "", 0);
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "out of sequence"));
    craft_free(&c);

    /* A DEFS record with a bad varint inside. */
    craft_start(&c);
    static const uint8_t badrec[] = {FMT_DEF_CONTEXT, 3, 0xff, 0xff, 0xff};
    craft_block(&c, FMT_BLOCK_DEFS, badrec, sizeof(badrec));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad thread context record"));
    save_corpus("bad-defs-varint", c.b.data, c.b.len);
    craft_free(&c);

    /* A stack node whose parent would be itself or later. */
    craft_start(&c);
    static const uint8_t badstack[] = {FMT_DEF_STACKS, 4, 1, 1, 1, 0};
    craft_block(&c, FMT_BLOCK_DEFS, badstack, sizeof(badstack));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad stack node 1"));
    save_corpus("bad-stack-parent", c.b.data, c.b.len);
    craft_free(&c);

    /* STACK_CODES (1.1): first id 1, 2 nodes, stream lengths (head, near,
     * far, literals, roots, limits), then the streams: a root at 0x10 and
     * a child of it whose address code names candidate 5 of none. */
    craft_start(&c);
    static const uint8_t badcode[] = {
        FMT_DEF_STACK_CODES, 13, 1, 2, 2, 1, 0, 0, 2, 0, 0, 2, 5, 0, 0x10};
    craft_block(&c, FMT_BLOCK_DEFS, badcode, sizeof(badcode));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad stack node 2"));
    save_corpus("bad-stack-code", c.b.data, c.b.len);
    craft_free(&c);

    /* The same with code 0 (a literal) but no literal, and with one left over. */
    craft_start(&c);
    static const uint8_t nolit[] = {
        FMT_DEF_STACK_CODES, 13, 1, 2, 2, 1, 0, 0, 2, 0, 0, 2, 0, 0, 0x10};
    craft_block(&c, FMT_BLOCK_DEFS, nolit, sizeof(nolit));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad stack node 2"));
    save_corpus("bad-stack-nolit", c.b.data, c.b.len);
    craft_free(&c);
    craft_start(&c);
    static const uint8_t extra[] = {
        FMT_DEF_STACK_CODES, 15, 1, 2, 2, 1, 0, 2, 2, 0, 0, 2, 0, 4, 4, 0, 0x10};
    craft_block(&c, FMT_BLOCK_DEFS, extra, sizeof(extra));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad stack node 3"));
    craft_free(&c);
    /* ... and a well-formed one: the child is at 0x12. */
    craft_start(&c);
    static const uint8_t good[] = {
        FMT_DEF_STACK_CODES, 14, 1, 2, 2, 1, 0, 1, 2, 0, 0, 2, 0, 4, 0, 0x10};
    craft_block(&c, FMT_BLOCK_DEFS, good, sizeof(good));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), 0);
    craft_free(&c);

    /* Stream lengths past the record's end; a parent after the node. */
    craft_start(&c);
    static const uint8_t longer[] = {
        FMT_DEF_STACK_CODES, 13, 1, 2, 2, 1, 0, 9, 2, 0, 0, 2, 0, 0, 0x10};
    craft_block(&c, FMT_BLOCK_DEFS, longer, sizeof(longer));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad stack record"));
    save_corpus("bad-stack-streams", c.b.data, c.b.len);
    craft_free(&c);
    craft_start(&c);
    static const uint8_t later[] = {
        FMT_DEF_STACK_CODES, 13, 1, 2, 2, 0, 1, 0, 2, 0, 0, 4, 1, 0, 0x10};
    craft_block(&c, FMT_BLOCK_DEFS, later, sizeof(later));
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "bad stack node 2"));
    save_corpus("bad-stack-code-parent", c.b.data, c.b.len);
    craft_free(&c);

    /* A trailer pointing outside the file, and one at a non-index block. */
    craft_start(&c);
    craft_block(&c, FMT_BLOCK_META, "", 0);
    uint8_t tr[FMT_TRAILER_SIZE];
    fmt_trailer_encode(tr, 1u << 30, 1);
    assert_int_equal(fmt_buf_add_bytes(&c.b, tr, sizeof(tr)), 0);
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "outside the file"));
    save_corpus("trailer-outside", c.b.data, c.b.len);
    c.b.len -= FMT_TRAILER_SIZE;
    fmt_trailer_encode(tr, FMT_HEADER_SIZE, 1);
    assert_int_equal(fmt_buf_add_bytes(&c.b, tr, sizeof(tr)), 0);
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0),
                     -EPROTO);
    assert_non_null(strstr(err, "does not point at an index block"));
    craft_free(&c);

    /* Header: bad magic, bad CRC, a newer major version, unknown required
     * feature bits; and a file too short to be anything. */
    craft_start(&c);
    craft_block(&c, FMT_BLOCK_META, "", 0);
    craft_end(&c);
    uint8_t *p = c.b.data;
    assert_int_equal(read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), 0);
    assert_false(incomplete);
    p[0] = 'X';
    assert_int_equal(read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), -EPROTO);
    assert_non_null(strstr(err, "bad.trace: offset 0: not a memscribe trace (bad magic)"));
    p[0] = 0x89;
    p[40] ^= 1;
    assert_int_equal(read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), -EPROTO);
    assert_non_null(strstr(err, "bad header CRC"));
    p[40] ^= 1;
    struct fmt_trace_info info = {0};
    fmt_header_encode(p, &info, 1u << 20); /* required bit 20: unknown */
    assert_int_equal(read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), -EPROTO);
    assert_non_null(strstr(err, "unsupported required feature bits"));
    fmt_header_encode(p, &info, FMT_FEAT_ZSTD_COLUMNS | (1ull << 40)); /* optional: fine */
    assert_int_equal(read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), 0);
    /* Format 1.3: a time unit of 0 or above a second is refused; 1 and
     * 10^9 are fine. */
    static const uint32_t units[4] = {0, 1000000001u, 1, 1000000000u};
    for (int i = 0; i < 4; i++) {
        info.time_unit_ns = units[i];
        fmt_header_encode(p, &info, FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_TIME_UNIT);
        int rc = read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0);
        assert_int_equal(rc, i < 2 ? -EPROTO : 0);
        if (i < 2)
            assert_non_null(strstr(err, "bad.trace: offset 0: bad time unit in the header"));
    }
    info.time_unit_ns = 0;
    fmt_header_encode(p, &info, FMT_FEAT_ZSTD_COLUMNS);
    fmt_put_le16(p + 8, 2);
    fmt_put_le32(p + 60, fmt_crc32c(0, p, 60)); /* only the version is wrong */
    assert_int_equal(read_all(p, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), -EPROTO);
    assert_non_null(strstr(err, "unsupported major version"));
    save_corpus("future-version", p, c.b.len);
    assert_int_equal(read_all(p, 10, &n, &incomplete, err, sizeof(err), NULL, 0), -EPROTO);
    assert_non_null(strstr(err, "truncated inside the file header"));
    assert_int_equal(
        read_all((const uint8_t *)"hello\n", 6, &n, &incomplete, err, sizeof(err), NULL, 0),
        -EPROTO);
    assert_non_null(strstr(err, "not a memscribe trace"));
    craft_free(&c);
}

/* Blocks, records and columns of later versions are skipped. */
static void test_unknown_parts_skipped(void **state)
{
    struct craft c;
    struct fmt_buf chunk = {0}, defs = {0};
    char err[600] = "";
    uint64_t n;
    int incomplete;
    static const uint8_t op_malloc[] = {FMT_EV_MALLOC | FMT_OP_CTX};
    static const uint8_t zero[] = {0}, one[] = {1}, two[] = {2}, size[] = {24};
    static const uint8_t addr[] = {0x80, 0x02};
    static const uint8_t future[] = {9, 9, 9};
    struct col cols[] = {{FMT_COL_OP, op_malloc, 1},
                         {FMT_COL_TIME, zero, 1},
                         {FMT_COL_CTX, one, 1},
                         {FMT_COL_SIZE, size, 1},
                         {FMT_COL_ADDR, addr, 2},
                         {FMT_COL_STACK, two, 1},
                         {40, future, 3}};

    (void)state;
    craft_start(&c);
    craft_block(&c, FMT_BLOCK_META, "", 0);
    craft_block(&c, 77, future, sizeof(future)); /* a block type of the future */
    chunk_payload(&chunk, 1, cols, 7);
    craft_block(&c, FMT_BLOCK_CHUNK, chunk.data, chunk.len);
    struct fmt_buf body = {0};
    v(&body, 1);
    rec(&defs, 99, &body); /* a record type of the future */
    defs_payload(&defs, 1, 1, 1);
    craft_block(&c, FMT_BLOCK_DEFS, defs.data, defs.len);
    craft_end(&c);
    assert_int_equal(read_all(c.b.data, c.b.len, &n, &incomplete, err, sizeof(err), NULL, 0), 0);
    assert_int_equal(n, 1);
    save_corpus("future-parts", c.b.data, c.b.len);
    craft_free(&c);
    fmt_buf_free(&chunk);
    fmt_buf_free(&defs);
    fmt_buf_free(&body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_bad_chunk_crc),
        cmocka_unit_test(test_crafted_events),
        cmocka_unit_test(test_crafted_framing),
        cmocka_unit_test(test_unknown_parts_skipped),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
