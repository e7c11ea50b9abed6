/* SPDX-License-Identifier: MIT */
/* The HTML report's parts that compute: the window pre-aggregation (for
 * every window of whole buckets it must give exactly what ana_window
 * computes), the commit lifetimes' cells (exactly what ana_vm_window, vmem,
 * computes), bucket widths, the <script>-safe JSON stream, and a whole
 * page on a synthetic trace with markup in its strings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_stacks.h"
#include "analysis/html/ana_html.h"
#include "analysis/html/ana_html_internal.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_tree.h"
#include "analysis/model/ana_window.h"
#include "analysis/pictures/ana_flame.h"
#include "analysis/vm/ana_vm_replay.h"
#include "analysis/vm/ana_vm_window.h"
#include "format/fmt_writer.h"
#include "memscribe/trace.h"
#include "test_ana_rnd.h"

#define EVIL "</script><img src=x onerror=alert(1)>"
#define NR_EVENTS 6000
#define NR_STACKS 6
#define SLOTS 48

/* Mallocs, frees and reallocs over SLOTS addresses from NR_STACKS stacks,
 * 64 events per chunk, irregular times. Returns a memfd. */
static int write_trace(uint64_t *last_ts)
{
    static const char cmd[] = "synthetic\0" EVIL;
    struct fmt_trace_info info = {.command = cmd, .command_len = sizeof(cmd), .hostname = "h"};
    struct fmt_writer_options opt = {.chunk_events = 64};
    struct fmt_writer *w;
    uint64_t addr[SLOTS] = {0};
    uint32_t stack[NR_STACKS];
    uint64_t ts = 500;
    int fd = memfd_create("html-trace", MFD_CLOEXEC);

    assert_true(fd >= 0);
    rnd_state = 777;
    assert_int_equal(fmt_writer_create(&w, fd, &info, &opt), 0);
    for (uint32_t i = 0; i < NR_STACKS; i++) {
        uint64_t frames[3] = {0x4000 + 0x100 * i, 0x3000 + 0x10 * (i % 3), 0x1000};
        assert_int_equal(fmt_writer_stack(w, 0, frames, 3, &stack[i]), 0);
    }
    for (int n = 0; n < NR_EVENTS; n++) {
        unsigned slot = (unsigned)(rnd() % SLOTS);
        struct fmt_event ev = {0};

        ev.ts_ns = ts;
        ts += 1 + rnd() % 3000;
        ev.pid = 70;
        ev.tid = 70;
        ev.stack = stack[rnd() % NR_STACKS];
        if (addr[slot] && rnd() % 4 == 0) {
            ev.kind = FMT_EV_REALLOC;
            ev.old_addr = addr[slot];
            ev.addr = addr[slot] + 0x8000; /* moved */
            ev.size = 1 + rnd() % 9000;
            addr[slot] = ev.addr;
        } else if (addr[slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = addr[slot];
            addr[slot] = 0;
        } else {
            ev.kind = FMT_EV_MALLOC;
            ev.addr = 0x1000000 + (uint64_t)slot * 0x10000;
            ev.size = 1 + rnd() % 9000;
            addr[slot] = ev.addr;
        }
        assert_int_equal(fmt_writer_event(w, &ev), 0);
        *last_ts = ev.ts_ns;
    }
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    return fd;
}

static struct fmt_reader *open_trace(int fd)
{
    struct fmt_reader *r;
    char err[600];

    assert_int_equal(fmt_reader_open_fd(&r, fd, "synthetic", err, sizeof(err)), 0);
    return r;
}

/* The page's classification (html/report.js computeWindow) for buckets
 * [i, j], per stack. */
static void classify(const struct ana_html_wpa *w, uint32_t i, uint32_t j, struct ana_wpa *out,
                     uint32_t nr_stacks, uint32_t other)
{
    memset(out, 0, (nr_stacks + 1) * sizeof(*out));
    for (size_t k = 0; k < w->cells.cap; k++) {
        const struct ana_html_cell *c = ana_map_slot_val(&w->cells, k);
        uint32_t stack, a, f;
        int cls;

        if (!ana_map_slot_key(&w->cells, k))
            continue;
        ana_html_wpa_key(ana_map_slot_key(&w->cells, k), &stack, &a, &f);
        int freed_in = f != ANA_HTML_NEVER && f <= j;
        if (a > j)
            continue;
        if (a >= i)
            cls = freed_in ? ANA_AIFI : ANA_AIFO;
        else if (f != ANA_HTML_NEVER && f < i)
            continue;
        else
            cls = freed_in ? ANA_AOFI : ANA_AOFO;
        if (stack == ANA_HTML_OTHER_STACK)
            stack = other; /* the lumped sites (keys) */
        assert_true(stack <= nr_stacks);
        out[stack].nr[cls] += c->nr;
        out[stack].bytes[cls] += c->bytes;
    }
}

static void check_windows(uint64_t bucket_ns, size_t max_cells, int lump)
{
    uint64_t last_ts;
    int fd = write_trace(&last_ts);
    struct fmt_reader *r = open_trace(fd);
    struct fmt_trace_counts counts;
    struct ana_html_wpa w;
    struct ana_heap_replay p;

    fmt_reader_counts(r, &counts);
    assert_int_equal(counts.last_ts_ns, last_ts);
    assert_int_equal(ana_html_wpa_init(&w, bucket_ns, counts.last_ts_ns), 0);
    if (max_cells)
        w.max_cells = max_cells;
    /* Lumping: only even stack ids keep their own cells. */
    uint8_t *keep = calloc(counts.nr_stacks + 1, 1);
    assert_non_null(keep);
    for (uint32_t s = 0; s <= counts.nr_stacks; s++)
        keep[s] = s % 2 == 0;
    ana_heap_replay_init(&p, NULL);
    assert_int_equal(ana_html_wpa_subscribe(&w, &p), 0);
    assert_int_equal(ana_heap_replay_run(&p, r, NULL), 0);
    ana_heap_replay_release(&p);
    if (max_cells) {
        /* It had to coarsen, and it stayed near the limit. */
        assert_true(w.nr_coarsened > 0);
        assert_true(w.bucket_ns == bucket_ns << w.nr_coarsened);
        assert_true(w.cells.nr <= 2 * max_cells + 2);
    } else {
        assert_int_equal(w.nr_coarsened, 0);
    }
    /* The sites the page does not list: their cells lumped after the pass. */
    if (lump)
        assert_int_equal(ana_html_wpa_lump(&w, keep, counts.nr_stacks + 1), 0);
    struct ana_wpa *got = calloc(counts.nr_stacks + 1, sizeof(*got));
    assert_non_null(got);

    uint32_t nb = w.nr_buckets;
    uint32_t cases[][2] = {{0, nb - 1},      {0, 0},      {nb - 1, nb - 1}, {nb / 3, nb / 2},
                           {nb / 2, nb / 2}, {1, nb - 2}, {nb / 4, nb - 1}, {0, nb / 5}};
    for (size_t n = 0; n < sizeof(cases) / sizeof(cases[0]); n++) {
        uint32_t i = cases[n][0], j = cases[n][1];
        struct ana_window aw;
        uint64_t t0 = i * w.bucket_ns, t1 = (j + 1) * w.bucket_ns - 1;

        classify(&w, i, j, got, counts.nr_stacks, 0); /* the trace has no stack 0 */
        assert_int_equal(ana_window_compute(&aw, r, NULL, t0, t1, ANA_WINDOW_BY_STACK, NULL, NULL),
                         0);
        struct ana_wpa other = {0};
        for (uint32_t s = 1; s <= counts.nr_stacks + 1; s++) {
            const struct ana_window_key *k = ana_map_get(&aw.keys, (uint64_t)s + 1);
            if (lump && s <= counts.nr_stacks && !keep[s]) {
                for (int c = 0; c < ANA_NR_WPA && k; c++) {
                    other.nr[c] += k->c.nr[c];
                    other.bytes[c] += k->c.bytes[c];
                }
                continue;
            }
            /* The last round compares the lumped sites (page index 0). */
            const struct ana_wpa *want = s > counts.nr_stacks ? &other : k ? &k->c : NULL;
            uint32_t g = s > counts.nr_stacks ? 0 : s;
            for (int c = 0; c < ANA_NR_WPA; c++) {
                uint64_t wn = want ? want->nr[c] : 0, wb = want ? want->bytes[c] : 0;
                if (wn != got[g].nr[c] || wb != got[g].bytes[c])
                    fail_msg("buckets [%u, %u] of %llu ns, stack %u, class %d: page %llu/%llu, "
                             "window %llu/%llu",
                             i, j, (unsigned long long)w.bucket_ns, g, c,
                             (unsigned long long)got[g].nr[c], (unsigned long long)got[g].bytes[c],
                             (unsigned long long)wn, (unsigned long long)wb);
            }
        }
        ana_window_release(&aw);
    }
    free(got);
    free(keep);
    ana_html_wpa_release(&w);
    fmt_reader_close(r);
    close(fd);
}

static void test_wpa_matches_window(void **state)
{
    (void)state;
    /* Fine, coarse and single-bucket divisions of the same trace. */
    check_windows(1000, 0, 0);
    check_windows(50000, 0, 0);
    check_windows(1000000, 0, 0);
    check_windows(1ull << 40, 0, 0);
    /* Too many cells: buckets double until they fit, and windows of the
     * wider buckets are still exact. */
    check_windows(1000, 2000, 0);
    check_windows(1000, 100, 0);
    /* Lumped sites: their cells add up to theirs in ana_window. */
    check_windows(50000, 0, 1);
    check_windows(1000, 2000, 1);
}

/* Mappings of one process from nr_stacks stacks: reserves, commits by mmap
 * and by mprotect, decommits, unmaps over VM_SLOTS regions of 1 MiB, and
 * ranges mapped at the start (origin snapshot, left out as vmem leaves
 * them out). With nr_stacks past ANA_HTML_MAX_SITES, stack k commits k
 * pages once (the largest are listed, the rest lumped). Returns a memfd. */
#define VM_SLOTS 24
static int write_vm_trace(uint32_t nr_stacks, uint64_t *last_ts)
{
    struct fmt_trace_info info = {.command = "vm\0", .command_len = 3, .hostname = "h"};
    struct fmt_writer_options opt = {.chunk_events = 64};
    struct fmt_writer *w;
    uint32_t *stack = calloc(nr_stacks, sizeof(*stack));
    int state[VM_SLOTS] = {0}; /* 0 free, 1 reserved, 2 committed */
    uint64_t ts = 100;
    int fd = memfd_create("html-vm-trace", MFD_CLOEXEC);

    assert_true(fd >= 0 && stack);
    rnd_state = 4242;
    assert_int_equal(fmt_writer_create(&w, fd, &info, &opt), 0);
    for (uint32_t i = 0; i < nr_stacks; i++) {
        uint64_t frames[3] = {0x7000 + 0x10 * i, 0x3000 + 0x10 * (i % 3), 0x1000};
        assert_int_equal(fmt_writer_stack(w, 0, frames, 3, &stack[i]), 0);
    }
    for (int n = 0; n < (nr_stacks > ANA_HTML_MAX_SITES ? (int)nr_stacks : 3000); n++) {
        unsigned slot = (unsigned)(rnd() % VM_SLOTS);
        struct fmt_event ev = {0};
        uint64_t base = 0x40000000ull + (uint64_t)slot * 0x100000;

        ev.ts_ns = ts;
        ts += 1 + rnd() % 5000;
        ev.pid = ev.tid = 71;
        ev.stack = stack[rnd() % nr_stacks];
        ev.addr = base;
        ev.size = 0x100000;
        ev.arg[1] = MAP_PRIVATE | MAP_ANONYMOUS;
        if (nr_stacks > ANA_HTML_MAX_SITES) { /* stack n commits n + 1 pages, never freed */
            ev.kind = FMT_EV_MMAP;
            ev.stack = stack[n];
            ev.addr = 0x40000000ull + (uint64_t)n * 0x1000000;
            ev.size = 4096 * ((uint64_t)n + 1);
            ev.arg[0] = PROT_READ | PROT_WRITE;
        } else if (n < 4) { /* mapped at the start: a snapshot */
            ev.kind = FMT_EV_MMAP;
            ev.addr = 0x10000000ull + (uint64_t)n * 0x100000;
            ev.arg[0] = PROT_READ;
            ev.origin = FMT_ORIGIN_SNAPSHOT;
        } else if (state[slot] == 0) { /* a reserve, or a commit */
            ev.kind = FMT_EV_MMAP;
            state[slot] = rnd() % 2 ? 1 : 2;
            ev.arg[0] = state[slot] == 2 ? PROT_READ | PROT_WRITE : PROT_NONE;
        } else if (rnd() % 3 == 0) { /* released */
            ev.kind = FMT_EV_MUNMAP;
            state[slot] = 0;
        } else { /* part of it committed or decommitted */
            ev.kind = FMT_EV_MPROTECT;
            ev.addr = base + 0x1000 * (rnd() % 200);
            ev.size = 0x1000 * (1 + rnd() % 40);
            ev.arg[0] = rnd() % 2 ? PROT_READ | PROT_WRITE : PROT_NONE;
            state[slot] = 2;
        }
        assert_int_equal(fmt_writer_event(w, &ev), 0);
        *last_ts = ev.ts_ns;
    }
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    free(stack);
    return fd;
}

/* The page's commit lifetimes (ana_html_vm, fed by the address-space
 * replay) for windows of whole buckets against vmem's (ana_vm_window of
 * [i*W, (j+1)*W - 1 ns]), per commit stack and class; with the cells
 * coarsened (max_cells) and the heap's cells (of the first width) made the
 * same width; with more stacks than the page lists, the lumped ones. */
static void check_vm_windows(uint32_t nr_stacks, uint64_t bucket_ns, size_t max_cells)
{
    uint64_t last_ts;
    int fd = write_vm_trace(nr_stacks, &last_ts);
    struct fmt_reader *r = open_trace(fd);
    struct ana_vm_replay p = {.until = UINT64_MAX};
    struct ana_html_wpa heap;
    struct ana_html_vm v;

    assert_int_equal(ana_html_wpa_init(&heap, bucket_ns, last_ts), 0);
    assert_int_equal(ana_html_vm_init(&v, r, NULL, bucket_ns, last_ts), 0);
    if (max_cells)
        v.cells.max_cells = max_cells;
    struct ana_scan_options so;

    ana_scan_options_init(&so);
    ana_html_vm_subscribe(&v, &p);
    assert_int_equal(ana_scan(r, &so, ana_vm_replay_event, &p), 0);
    assert_int_equal(ana_html_vm_finish(&v, &p, &heap), 0);
    assert_int_equal(heap.bucket_ns, v.cells.bucket_ns);
    assert_true(max_cells ? v.cells.nr_coarsened > 0 : v.cells.nr_coarsened == 0);
    if (nr_stacks > ANA_HTML_MAX_SITES) {
        assert_int_equal(v.nr_keys, nr_stacks);
        assert_int_equal(v.nr_other, nr_stacks - ANA_HTML_MAX_SITES);
        for (uint32_t k = 0; k < v.nr_keys; k++) /* stack k committed k + 1 pages */
            assert_int_equal(ana_html_vm_listed(&v, k), k >= nr_stacks - ANA_HTML_MAX_SITES);
    } else {
        assert_int_equal(v.nr_keys, nr_stacks); /* not the snapshot's stack */
        assert_null(v.keep);
    }
    struct ana_wpa *got = calloc(v.nr_keys + 1, sizeof(*got));
    struct ana_wpa *want = calloc(v.nr_keys + 1, sizeof(*want));
    uint32_t nb = v.cells.nr_buckets;
    uint32_t cases[][2] = {{0, nb - 1},      {0, 0},      {nb - 1, nb - 1}, {nb / 3, nb / 2},
                           {nb / 2, nb / 2}, {1, nb - 2}, {nb / 4, nb - 1}, {0, nb / 5}};

    assert_true(got && want);
    for (size_t n = 0; n < sizeof(cases) / sizeof(cases[0]); n++) {
        uint32_t i = cases[n][0], j = cases[n][1];
        struct ana_vm_window w = {
            .replay = {.r = r, .t0 = i * v.cells.bucket_ns, .t1 = (j + 1) * v.cells.bucket_ns - 1},
            .origins = ANA_VM_WINDOW_ORIGINS};

        classify(&v.cells, i, j, got, v.nr_keys, v.nr_keys);
        ana_vm_window_init(&w);
        assert_int_equal(ana_scan(r, &so, ana_vm_replay_event, &w.replay), 0);
        assert_int_equal(ana_vm_replay_finish(&w.replay), 0);
        memset(want, 0, (v.nr_keys + 1) * sizeof(*want));
        for (size_t x = 0; x < w.nr; x++) {
            const struct ana_vm_life *l = &w.v[x];
            uint32_t k = 0;

            while (k < v.nr_keys && v.stack[k] != l->l.commit_stack)
                k++;
            assert_true(k < v.nr_keys);
            if (!ana_html_vm_listed(&v, k))
                k = v.nr_keys;
            want[k].nr[l->cls]++;
            want[k].bytes[l->cls] += l->l.hi - l->l.lo;
        }
        for (uint32_t k = 0; k <= v.nr_keys; k++)
            for (int c = 0; c < ANA_NR_WPA; c++)
                if (want[k].nr[c] != got[k].nr[c] || want[k].bytes[c] != got[k].bytes[c])
                    fail_msg("buckets [%u, %u] of %llu ns, key %u, class %d: page %llu/%llu, "
                             "vmem %llu/%llu",
                             i, j, (unsigned long long)v.cells.bucket_ns, k, c,
                             (unsigned long long)got[k].nr[c], (unsigned long long)got[k].bytes[c],
                             (unsigned long long)want[k].nr[c],
                             (unsigned long long)want[k].bytes[c]);
        ana_vm_window_release(&w);
    }
    free(got);
    free(want);
    ana_html_vm_release(&v);
    ana_html_wpa_release(&heap);
    ana_vm_replay_release(&p);
    fmt_reader_close(r);
    close(fd);
}

static void test_vm_matches_vmem(void **state)
{
    (void)state;
    check_vm_windows(5, 1000, 0);
    check_vm_windows(5, 200000, 0);
    /* Too many cells: the commit cells double, the heap's follow. */
    check_vm_windows(5, 1000, 300);
    /* More commit stacks than the page lists: the rest lumped. */
    check_vm_windows(ANA_HTML_MAX_SITES + 7, 100000, 0);
}

static void test_key_mix(void **state)
{
    (void)state;
    /* A bijection: unmix undoes mix, only 0 maps to 0, and keys that differ
     * only in their high half land on different low bits. */
    uint64_t keys[] = {1, 2, 0x100000001ull, 0x200000001ull, UINT64_MAX, 0x8000000000000000ull};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        assert_true(ana_html_unmix(ana_html_mix(keys[i])) == keys[i]);
        assert_true(ana_html_mix(keys[i]) != 0);
    }
    assert_true(ana_html_mix(0) == 0);
    assert_true((ana_html_mix(0x100000001ull) & 0xffff) != (ana_html_mix(0x200000001ull) & 0xffff));
}

static void test_bucket_width(void **state)
{
    (void)state;
    /* Round widths, never more than the target's buckets. */
    assert_int_equal(ana_html_bucket_width(2179000000ull, 400), 10000000);
    assert_int_equal(ana_html_bucket_width(1999999999ull, 400), 5000000);
    assert_int_equal(ana_html_bucket_width(0, 400), 1);
    assert_int_equal(ana_html_bucket_width(399, 400), 1);
    assert_int_equal(ana_html_bucket_width(400, 400), 2);
    assert_int_equal(ana_html_bucket_width(1000000, 1), 2000000);
    /* A target above the 16-bit limit is capped. */
    assert_true(1000000000ull / ana_html_bucket_width(1000000000ull, 1000000) + 1 <=
                ANA_HTML_MAX_BUCKETS);
}

static void test_script_stream(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    FILE *f;

    (void)state;
    assert_non_null(out);
    f = ana_html_script_open(out);
    assert_non_null(f);
    /* Split writes: the U+2028 sequence across calls is still caught. */
    fputs("{\"s\":\"" EVIL " & <!-- \xe2", f);
    fflush(f);
    fputs("\x80\xa8 \xe2\x80\xa9 \xe2\x82\xac \xe2\x80\"}", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(fclose(out), 0);
    assert_string_equal(buf, "{\"s\":\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)"
                             "\\u003e \\u0026 \\u003c!-- \\u2028 \\u2029 \xe2\x82\xac "
                             "\xe2\x80\"}");
    free(buf);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* ana_progress_fn: counts the passes over the trace (ana_scan's last call
 * of each). */
static void count_pass(void *arg, uint64_t ts_ns, uint64_t last_ns)
{
    if (ts_ns == last_ns)
        (*(unsigned *)arg)++;
}

static void test_page(void **state)
{
    uint64_t last_ts;
    int fd = write_trace(&last_ts);
    struct fmt_reader *r = open_trace(fd);
    unsigned passes = 0;
    struct ana_html_options o = {.trace_name = "t<b>" EVIL,
                                 .sym = {.raw = true},
                                 .progress = count_pass,
                                 .progress_arg = &passes};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);

    (void)state;
    assert_non_null(out);
    assert_int_equal(ana_html_write(r, &o, out), 0);
    /* Everything the page shows of the events comes from one read. */
    assert_int_equal(passes, 1);
    assert_int_equal(fclose(out), 0);
    /* Every marker replaced; the two real script elements and nothing
     * else can close a script. */
    assert_null(strstr(buf, "<!--@"));
    assert_int_equal(count(buf, "</script>"), 2);
    assert_int_equal(count(buf, "<img"), 0);
    /* The command line and the trace name as text and as data. */
    assert_non_null(strstr(buf, "synthetic &lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    assert_non_null(strstr(buf, "<title>memscribe: t&lt;b&gt;&lt;/script&gt;"));
    assert_non_null(strstr(buf, "\"command\":[\"synthetic\",\"\\u003c/script\\u003e\\u003cimg"));
    /* The script runs under a nonce that the policy names. */
    char *csp = strstr(buf, "script-src 'nonce-");
    assert_non_null(csp);
    char nonce[64];
    assert_int_equal(sscanf(csp, "script-src 'nonce-%32[0-9a-f]'", nonce), 1);
    char tag[128];
    snprintf(tag, sizeof(tag), "<script nonce=\"%s\">", nonce);
    assert_non_null(strstr(buf, tag));
    /* The plots are inline. */
    assert_non_null(strstr(buf, "id=\"timeline-svg\""));
    assert_non_null(strstr(buf, "id=\"histogram-svg\""));
    free(buf);
    fmt_reader_close(r);
    close(fd);
}

static int model_event(void *arg, const struct fmt_event *ev)
{
    return ana_model_event(arg, ev);
}

/* More call sites than a picture shows: the largest are kept, and more
 * while the rest would hold over 1 % of a total; a lump (none here: each
 * site holds more than 1 % of some total) goes into one frame on the root,
 * and every total stays the model's. */
static void test_flame_lumps_small_sites(void **state)
{
    uint64_t last_ts;
    int fd = write_trace(&last_ts);
    struct fmt_reader *r = open_trace(fd);
    struct ana_model_options mo = {0};
    struct ana_scan_options so;
    struct ana_sym_options sym = {.raw = true};
    struct ana_model *m;
    struct ana_stacks *st;
    struct ana_tree t;
    uint8_t *keep;

    (void)state;
    assert_int_equal(ana_model_create(&m, &mo), 0);
    ana_scan_options_init(&so);
    assert_int_equal(ana_scan(r, &so, model_event, m), 0);
    ana_model_finish(m);
    assert_int_equal(ana_stacks_create(&st, r, &sym), 0);
    assert_int_equal(ana_flame_top_sites(m, st, 2, &keep), 6);
    assert_int_equal(ana_tree_init(&t, ANA_FLAME_NR_COSTS, 0), 0);
    assert_int_equal(ana_flame_build(&t, m, st, 0, keep), 0);
    const struct ana_scope *total = ana_model_total(m);
    assert_int_equal(t.nodes[0].incl[ANA_FLAME_ALLOCATIONS], total->nr_allocs);
    assert_int_equal(t.nodes[0].incl[ANA_FLAME_BYTES], total->alloc_bytes);
    assert_int_equal(t.nodes[0].incl[ANA_FLAME_TEMPORARY], total->nr_temporary);
    int found = 0;
    for (uint32_t c = t.nodes[0].first_child; c != ANA_TREE_NONE; c = t.nodes[c].next_sibling)
        found |= !strncmp(ana_stacks_str(st, t.nodes[c].label), "(", 1) &&
                 strstr(ana_stacks_str(st, t.nodes[c].label), "other call sites");
    assert_false(found);
    /* Every site is kept: each holds more than 1 % of some total. */
    uint32_t nr_kept = 0;
    for (uint32_t id = 0; id < ana_model_nr_sites(m); id++)
        nr_kept += keep[id];
    assert_int_equal(nr_kept, 6);
    free(keep);
    ana_tree_release(&t);
    ana_stacks_destroy(st);
    ana_model_destroy(m);
    fmt_reader_close(r);
    close(fd);
}

/* A trace with no event at all still gives a whole page. */
static void test_page_empty(void **state)
{
    struct fmt_trace_info info = {.command = "x", .command_len = 1, .hostname = "h"};
    struct fmt_writer *w;
    struct fmt_reader *r;
    struct ana_html_options o = {.trace_name = "empty", .sym = {.raw = true}};
    char *buf = NULL;
    size_t len = 0;
    int fd = memfd_create("empty-trace", MFD_CLOEXEC);
    FILE *out;

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(fmt_writer_create(&w, fd, &info, NULL), 0);
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    r = open_trace(fd);
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(ana_html_write(r, &o, out), 0);
    assert_int_equal(fclose(out), 0);
    assert_null(strstr(buf, "<!--@"));
    assert_non_null(strstr(buf, "\"nrBuckets\":1"));
    assert_non_null(strstr(buf, "\"allocations\":0"));
    free(buf);
    fmt_reader_close(r);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wpa_matches_window), cmocka_unit_test(test_vm_matches_vmem),
        cmocka_unit_test(test_bucket_width),       cmocka_unit_test(test_key_mix),
        cmocka_unit_test(test_script_stream),      cmocka_unit_test(test_page),
        cmocka_unit_test(test_page_empty),         cmocka_unit_test(test_flame_lumps_small_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
