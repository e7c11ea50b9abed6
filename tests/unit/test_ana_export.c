/* SPDX-License-Identifier: MIT */
/* memscribe export on the synthetic trace (test_ana_export_trace.c): each
 * format's exact output or exact numbers, the SQLite leaks and window
 * queries of docs/export.md against the analysis core, output errors.
 * `test_ana_export --write-trace PATH` writes the trace for the e2e tests. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "analysis/export/ana_export_api.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_window.h"
#include "test_ana_export_trace.h"

struct fixture {
    int trace_fd;
    struct fmt_reader *r;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char err[600];

    assert_non_null(f);
    f->trace_fd = memfd_create("xtrace", MFD_CLOEXEC);
    assert_true(f->trace_fd >= 0);
    assert_int_equal(xtrace_write(f->trace_fd), 0);
    assert_int_equal(fmt_reader_open_fd(&f->r, f->trace_fd, "xtrace", err, sizeof(err)), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    fmt_reader_close(f->r);
    close(f->trace_fd);
    free(f);
    return 0;
}

/* Run one export into a memfd and return its bytes, NUL-terminated;
 * image_done (may be NULL): ana_export_options'. */
static char *export_opt(struct fixture *f, const char *fmt, enum ana_export_cost cost,
                        int (*image_done)(void *, uint32_t, uint64_t), void *image_arg, size_t *len)
{
    struct ana_export_options o = {
        .cost = cost, .massif_threshold = -1, .image_done = image_done, .image_arg = image_arg};
    struct ana_export_output out = {.format = ana_exporter_find(fmt)};
    int fd = memfd_create("out", MFD_CLOEXEC);

    o.sym.raw = true;
    assert_true(fd >= 0);
    assert_non_null(out.format);
    out.fd = fd;
    assert_int_equal(ana_export_run(f->r, &o, &out, 1), 0);
    off_t n = lseek(fd, 0, SEEK_END);
    char *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(pread(fd, p, (size_t)n, 0), n);
    p[n] = 0;
    close(fd);
    if (len)
        *len = (size_t)n;
    return p;
}

static char *export(struct fixture *f, const char *fmt, enum ana_export_cost cost, size_t *len)
{
    return export_opt(f, fmt, cost, NULL, NULL, len);
}

static char *export_with(struct fixture *f, const char *fmt,
                         int (*image_done)(void *, uint32_t, uint64_t), void *image_arg,
                         size_t *len)
{
    return export_opt(f, fmt, 0, image_done, image_arg, len);
}

static void test_model(void **state)
{
    struct fixture *f = *state;
    struct ana_xmodel m;

    assert_int_equal(ana_xmodel_build(f->r, NULL, &m), 0);
    assert_int_equal(m.nr_allocs, XT_NR_ALLOCS);
    assert_int_equal(m.alloc_bytes, XT_ALLOC_BYTES);
    assert_int_equal(m.peak_bytes, XT_PEAK_BYTES);
    assert_int_equal(m.peak_ts_ns, XT_PEAK_NS);
    assert_int_equal(m.live_bytes, XT_LEAKED_BYTES);
    assert_int_equal(m.live_blocks, XT_LEAKED_BLOCKS);
    assert_int_equal(m.nr_temporary, XT_NR_TEMPORARY);
    assert_int_equal(m.end_ts_ns, XT_END_NS);
    /* The 9th heap event (B2 at 9 ms) reaches the peak. */
    assert_int_equal(m.peak_step, 9);
    assert_int_equal(m.stacks[XT_STACK_A].peak_bytes, 100);
    assert_int_equal(m.stacks[XT_STACK_B].peak_bytes, 400);
    assert_int_equal(m.stacks[XT_STACK_C].peak_bytes, 1000);
    assert_int_equal(m.stacks[XT_STACK_A].live_bytes, 150);
    assert_int_equal(m.stacks[XT_STACK_C].live_bytes, 32);
    assert_int_equal(m.stacks[XT_STACK_A].nr_temporary, 1);
    assert_int_equal(m.stacks[XT_STACK_B].nr_temporary, 2);
    assert_int_equal(m.stacks[XT_STACK_C].nr_temporary, 2);
    ana_xmodel_release(&m);
}

static void test_folded(void **state)
{
    struct fixture *f = *state;
    static const struct {
        enum ana_export_cost cost;
        const char *want;
    } cases[] = {
        {ANA_COST_BYTES, "0x1300;0x1200;0x1100 300\n0x1300;0x1200;0x2100 664\n"
                         "libc#.so+0x200;libc#.so+0x100 1332\n"},
        {ANA_COST_ALLOCATIONS, "0x1300;0x1200;0x1100 3\n0x1300;0x1200;0x2100 3\n"
                               "libc#.so+0x200;libc#.so+0x100 3\n"},
        {ANA_COST_PEAK, "0x1300;0x1200;0x1100 100\n0x1300;0x1200;0x2100 400\n"
                        "libc#.so+0x200;libc#.so+0x100 1000\n"},
        {ANA_COST_LEAKED, "0x1300;0x1200;0x1100 150\nlibc#.so+0x200;libc#.so+0x100 32\n"},
        {ANA_COST_TEMPORARY, "0x1300;0x1200;0x1100 1\n0x1300;0x1200;0x2100 2\n"
                             "libc#.so+0x200;libc#.so+0x100 2\n"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = export(f, "folded", cases[i].cost, NULL);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
}

static void test_csv(void **state)
{
    struct fixture *f = *state;
    char *got = export(f, "csv", 0, NULL);

    assert_string_equal(got, "serial,pid,tid,kind,address,size,alloc_ns,free_ns,stack,function\n"
                             "2,4100,4100,malloc,0x20000,200,2000000,3000000,4,0x2100\n"
                             "4,4100,4101,malloc,0x30000,300,4000000,6000000,6,libc#.so+0x100\n"
                             "5,4100,4100,malloc,0x10100,50,5000000,7000000,3,0x1100\n"
                             "7,4100,4101,malloc,0x40000,1000,8000000,10000000,6,libc#.so+0x100\n"
                             "1,4100,4100,malloc,0x10000,100,1000000,11000000,3,0x1100\n"
                             "8,4100,4100,malloc,0x50000,400,9000000,12000000,4,0x2100\n"
                             "11,4100,4101,malloc,0x80000,64,14000000,15000000,4,0x2100\n"
                             "9,4100,4100,realloc,0x60000,150,11000000,,3,0x1100\n"
                             "10,4100,4100,calloc,0x70000,32,13000000,,6,libc#.so+0x100\n");
    free(got);
}

/* The peak snapshot: memscribe's peak, the tree of the three stacks,
 * children by decreasing bytes, one space of indent per depth. */
static void test_massif(void **state)
{
    struct fixture *f = *state;
    char *got = export(f, "massif", 0, NULL);
    const char *peak = strstr(got, "heap_tree=peak\n");

    assert_true(!strncmp(got,
                         "desc: memscribe export --to massif\ncmd: synthetic --export-test\n"
                         "time_unit: ms\n#-----------\nsnapshot=0\n",
                         96));
    assert_non_null(peak);
    assert_null(strstr(peak + 1, "heap_tree=peak"));
    assert_non_null(
        strstr(got, "time=9.000\nmem_heap_B=1500\nmem_heap_extra_B=0\n"
                    "mem_stacks_B=0\nheap_tree=peak\n"
                    "n3: 1500 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
                    " n1: 1000 0x3100: libc_.so+0x100 (in /opt/lib_1/libc_.so)\n"
                    "  n0: 1000 0x3200: libc_.so+0x200 (in /opt/lib_1/libc_.so)\n"
                    " n1: 400 0x2100: 0x2100\n"
                    "  n1: 400 0x1200: 0x1200\n"
                    "   n0: 400 0x1300: 0x1300\n"
                    " n1: 100 0x1100: 0x1100\n"
                    "  n1: 100 0x1200: 0x1200\n"
                    "   n0: 100 0x1300: 0x1300\n"
                    "#-----------\n"));
    /* The last snapshot is detailed and holds what leaked; 32 bytes of 182
     * are above the 1% threshold. */
    assert_non_null(
        strstr(got, "time=16.000\nmem_heap_B=182\nmem_heap_extra_B=0\nmem_stacks_B=0\n"
                    "heap_tree=detailed\n"
                    "n2: 182 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
                    " n1: 150 0x1100: 0x1100\n"
                    "  n1: 150 0x1200: 0x1200\n"
                    "   n0: 150 0x1300: 0x1300\n"
                    " n1: 32 0x3100: libc_.so+0x100 (in /opt/lib_1/libc_.so)\n"
                    "  n0: 32 0x3200: libc_.so+0x200 (in /opt/lib_1/libc_.so)\n"));
    /* A '#' anywhere but in the separator lines would cut the line for ms_print. */
    for (const char *p = strchr(got, '#'); p; p = strchr(p + 1, '#'))
        assert_true(p == got || p[-1] == '\n' || p[-1] == '#');
    free(got);
}

/* DHAT: per program point totals add up to the trace's; stacks unique. */
static void test_dhat(void **state)
{
    struct fixture *f = *state;
    char *got = export(f, "dhat", 0, NULL);
    unsigned long long tb = 0, tbk = 0, gb = 0, eb = 0, ebk = 0, mb_c = 0;
    char fs[16][64];
    int n = 0;

    assert_non_null(strstr(got, "{\"dhatFileVersion\":2,\"mode\":\"heap\",\"verb\":\"Allocated\","
                                "\"bklt\":true,\"bkacc\":false,"));
    assert_non_null(strstr(got, "\"cmd\":\"synthetic --export-test\",\"pid\":4100,\"te\":16000,"
                                "\"tg\":9000,\"pps\":["));
    for (const char *p = strstr(got, "\n{\"tb\""); p; p = strstr(p + 1, "\n{\"tb\"")) {
        unsigned long long v[9];
        assert_true(n < 16);
        assert_int_equal(
            sscanf(p,
                   "\n{\"tb\":%llu,\"tbk\":%llu,\"tl\":%llu,\"mb\":%llu,\"mbk\":%llu,"
                   "\"gb\":%llu,\"gbk\":%llu,\"eb\":%llu,\"ebk\":%llu,\"fs\":[%63[0-9,]]}",
                   v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7, v + 8, fs[n]),
            10);
        tb += v[0], tbk += v[1], gb += v[5], eb += v[7], ebk += v[8];
        if (v[0] == 1332) /* stack C: C1 300 and C2 1000 never live together */
            mb_c = v[3];
        for (int k = 0; k < n; k++)
            assert_string_not_equal(fs[k], fs[n]);
        n++;
    }
    assert_int_equal(n, 3);
    assert_int_equal(tb, XT_ALLOC_BYTES);
    assert_int_equal(tbk, XT_NR_ALLOCS);
    assert_int_equal(gb, XT_PEAK_BYTES);
    assert_int_equal(eb, XT_LEAKED_BYTES);
    assert_int_equal(ebk, XT_LEAKED_BLOCKS);
    assert_int_equal(mb_c, 1000);
    assert_non_null(strstr(got, "\"ftbl\":[\n\"[root]\",\n\"0x1100: 0x1100\",\n"));
    free(got);
}

/* heaptrack_print's accounting (heaptrack 1.4, accumulatedtracedata.cpp),
 * redone here: allocations are "+" lines, a "-" of the info of the last
 * "+" is temporary, and a "-" resets that to info 0 (so "- 0" after a "-"
 * counts too), the peak is the largest running sum. Also checks that
 * every index is defined before use, and heaptrack_gui's rule (parser.cpp,
 * handleAllocation): the "+" lines take up info indexes in order, 0 first
 * (an index past those seen is written past the end of a vector). And
 * heaptrack_gui's Consumed chart (parser.cpp, handleTimeStamp): the running
 * sum at each "c" line, whose times never go back; the first ticks as
 * "ms:sum" (hex ms, as the file has them). */
struct ht_counts {
    unsigned allocs, temps;
    unsigned long long peak, leaked;
    unsigned long long chart_max; /* the highest sum at a "c" line */
    unsigned nr_ticks, nr_spikes; /* spikes: runs of ticks at XT_SPIKE_SIZE or more */
    char ticks[256];
};

static struct ht_counts heaptrack_counts(char *text)
{
    static unsigned long long sizes[1 << 16];
    unsigned long long last = 0, v1, v2, last_ms = 0;
    unsigned nr_strings = 0, nr_ips = 0, nr_traces = 0, nr_infos = 0, nr_plus_infos = 0;
    struct ht_counts c = {0};
    size_t tl = 0;
    bool high = false;

    assert_true(!strncmp(text, "v 10400 3\nX synthetic --export-test\nI 1000 0\n", 43));
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        switch (l[0]) {
        case 's':
            nr_strings++;
            break;
        case 'i':
            assert_int_equal(sscanf(l, "i %llx %llx", &v1, &v2), 2);
            assert_true(v2 >= 1 && v2 <= nr_strings);
            nr_ips++;
            break;
        case 't':
            assert_int_equal(sscanf(l, "t %llx %llx", &v1, &v2), 2);
            assert_true(v1 >= 1 && v1 <= nr_ips && v2 <= nr_traces);
            nr_traces++;
            break;
        case 'a':
            assert_int_equal(sscanf(l, "a %llx %llx", &v1, &v2), 2);
            assert_true(v2 <= nr_traces && nr_infos < sizeof(sizes) / sizeof(sizes[0]));
            sizes[nr_infos++] = v1;
            break;
        case '+':
            assert_int_equal(sscanf(l, "+ %llx", &v1), 1);
            assert_true(v1 < nr_infos);
            assert_true(v1 <= nr_plus_infos);
            nr_plus_infos += v1 == nr_plus_infos;
            c.allocs++;
            c.leaked += sizes[v1];
            c.peak = c.leaked > c.peak ? c.leaked : c.peak;
            last = v1;
            break;
        case '-':
            assert_int_equal(sscanf(l, "- %llx", &v1), 1);
            assert_true(v1 < nr_infos);
            c.temps += last == v1;
            last = 0;
            c.leaked -= sizes[v1];
            break;
        case 'c':
            assert_int_equal(sscanf(l, "c %llx", &v1), 1);
            assert_true(v1 >= last_ms);
            last_ms = v1;
            c.nr_ticks++;
            c.chart_max = c.leaked > c.chart_max ? c.leaked : c.chart_max;
            c.nr_spikes += !high && c.leaked >= XT_SPIKE_SIZE;
            high = c.leaked >= XT_SPIKE_SIZE;
            if (tl + 40 < sizeof(c.ticks))
                tl += (size_t)sprintf(c.ticks + tl, "%s%llx:%llu", tl ? " " : "", v1, c.leaked);
            break;
        case 'v':
        case 'X':
        case 'I':
            break;
        default:
            fail_msg("unexpected line '%s'", l);
        }
    }
    return c;
}

static void test_heaptrack(void **state)
{
    struct fixture *f = *state;
    char *got = export(f, "heaptrack", 0, NULL);
    struct ht_counts c = heaptrack_counts(got);

    assert_int_equal(c.allocs, XT_NR_ALLOCS);
    assert_int_equal(c.temps, XT_NR_TEMPORARY);
    assert_int_equal(c.peak, XT_PEAK_BYTES);
    assert_int_equal(c.leaked, XT_LEAKED_BYTES);
    /* Ticks at the peak (9 ms), at 10 ms (the blocks of 1000 and 400
     * bytes still live: the 1000 is freed at 10 ms, after the tick, and
     * still shown temporary) and at the end (16 ms). */
    assert_string_equal(c.ticks, "9:1500 a:1500 10:182");
    free(got);
}

/* Ten 8 MiB blocks, each temporary and live across ticks: the chart draws
 * ten spikes that reach the peak, and heaptrack_print counts them
 * temporary; with another thread allocating and freeing between the
 * ticks, heaptrack's one stream cannot show them temporary (their "+"
 * and "-" lines are not next to each other), and the chart is the same. */
static void test_heaptrack_spikes(void **state)
{
    (void)state;
    for (int churn = 0; churn <= 1; churn++) {
        struct fixture f = {.trace_fd = memfd_create("spikes", MFD_CLOEXEC)};
        struct ana_xmodel m;
        char err[600];

        assert_int_equal(xtrace_write_spikes(f.trace_fd, churn), 0);
        assert_int_equal(fmt_reader_open_fd(&f.r, f.trace_fd, "spikes", err, sizeof(err)), 0);
        assert_int_equal(ana_xmodel_build(f.r, NULL, &m), 0);
        assert_int_equal(m.peak_bytes, XT_SPIKE_SIZE + (churn ? 16 : 0));
        assert_int_equal(m.nr_temporary, XT_NR_SPIKES + (churn ? 999 : 0));
        char *got = export(&f, "heaptrack", 0, NULL);
        struct ht_counts c = heaptrack_counts(got);
        assert_int_equal(c.allocs, m.nr_allocs);
        assert_int_equal(c.peak, m.peak_bytes);
        assert_int_equal(c.leaked, 0);
        assert_int_equal(c.chart_max, m.peak_bytes);
        assert_int_equal(c.nr_spikes, XT_NR_SPIKES);
        assert_int_equal(c.temps, m.nr_temporary - (churn ? XT_NR_SPIKES : 0));
        free(got);
        ana_xmodel_release(&m);
        fmt_reader_close(f.r);
        close(f.trace_fd);
    }
}

/* heaptrack's one stream cannot show two temporary blocks live together at
 * the peak: the peak is kept, one of the two counts as temporary. */
static void test_heaptrack_two_at_peak(void **state)
{
    struct fixture f = {.trace_fd = memfd_create("two", MFD_CLOEXEC)};
    struct ana_xmodel m;
    char err[600];

    (void)state;
    assert_int_equal(xtrace_write_two_at_peak(f.trace_fd), 0);
    assert_int_equal(fmt_reader_open_fd(&f.r, f.trace_fd, "two", err, sizeof(err)), 0);
    assert_int_equal(ana_xmodel_build(f.r, NULL, &m), 0);
    assert_int_equal(m.nr_temporary, 2);
    assert_int_equal(m.peak_bytes, 300);
    ana_xmodel_release(&m);

    char *got = export(&f, "heaptrack", 0, NULL);
    struct ht_counts c = heaptrack_counts(got);
    assert_int_equal(c.allocs, 2);
    assert_int_equal(c.peak, 300);
    assert_string_equal(c.ticks, "2:300 4:0"); /* the peak's tick, the end's */
    /* "+ 0 + 1 - 1" (the second block, temporary, at the peak), then the
     * first block's "- 0" after a "-": heaptrack counts that as temporary
     * too (its quirk, and the one case the file cannot avoid: see
     * ana_export_heaptrack.c). */
    assert_int_equal(c.temps, 2);
    assert_int_equal(c.leaked, 0);
    free(got);
    fmt_reader_close(f.r);
    close(f.trace_fd);
}

/* Random traces of three threads: heaptrack_print's peak, calls and leaks
 * are always memscribe's, and so is the chart's top; its temporaries
 * never more than memscribe's, and fewer only by blocks live together at
 * a tick (none in these 40 traces but at the peak's). */
static void test_heaptrack_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct fixture f = {.trace_fd = memfd_create("random", MFD_CLOEXEC)};
        struct ana_xmodel m;
        char err[600];

        assert_int_equal(xtrace_write_random(f.trace_fd, 3000, seed), 0);
        assert_int_equal(fmt_reader_open_fd(&f.r, f.trace_fd, "random", err, sizeof(err)), 0);
        assert_int_equal(ana_xmodel_build(f.r, NULL, &m), 0);
        char *got = export(&f, "heaptrack", 0, NULL);
        struct ht_counts c = heaptrack_counts(got);
        assert_int_equal(c.allocs, m.nr_allocs);
        assert_int_equal(c.peak, m.peak_bytes);
        assert_int_equal(c.leaked, m.live_bytes);
        assert_int_equal(c.chart_max, m.peak_bytes);
        assert_true(c.temps <= m.nr_temporary);
        /* At most two other threads' blocks can be live at a tick. */
        assert_true(c.temps + 2 >= m.nr_temporary);
        free(got);
        ana_xmodel_release(&m);
        fmt_reader_close(f.r);
        close(f.trace_fd);
    }
}

/* A minimal protobuf reader for the pprof check. */
static uint64_t pb_varint(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;

    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    fail_msg("bad varint");
    return 0;
}

struct pprof_summary {
    uint64_t sums[4]; /* per sample type, over all samples */
    uint64_t nr_types, nr_samples, nr_strings, first_string_len;
};

/* A gzipped profile's bytes (*n of them), to free. */
static uint8_t *gunzip(const char *gz, size_t len, size_t *n)
{
    uLongf cap = 1 << 22;
    uint8_t *pb = malloc(cap);
    z_stream z = {0};

    assert_non_null(pb);
    assert_true(len > 18 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    z.next_out = pb;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    *n = z.total_out;
    inflateEnd(&z);
    return pb;
}

/* Gunzip a profile and walk its top-level fields. */
static struct pprof_summary pprof_decode(const char *gz, size_t len)
{
    struct pprof_summary s = {.first_string_len = 99};
    size_t size;
    uint8_t *pb = gunzip(gz, len, &size);
    const uint8_t *p = pb, *end = pb + size;

    while (p < end) {
        uint64_t key = pb_varint(&p, end), field = key >> 3;
        if ((key & 7) == 0) {
            pb_varint(&p, end);
            continue;
        }
        assert_int_equal(key & 7, 2);
        uint64_t n = pb_varint(&p, end);
        const uint8_t *m = p, *mend = p + n;
        p = mend;
        if (field == 1)
            s.nr_types++;
        if (field == 6 && s.nr_strings++ == 0)
            s.first_string_len = n;
        if (field != 2)
            continue;
        s.nr_samples++;
        while (m < mend) { /* sample: 1 location ids, 2 values, both packed */
            uint64_t k = pb_varint(&m, mend), l = pb_varint(&m, mend);
            const uint8_t *v = m;
            m += l;
            for (int i = 0; k >> 3 == 2 && v < m && i < 4; i++)
                s.sums[i] += pb_varint(&v, m);
        }
    }
    free(pb);
    return s;
}

static void test_pprof(void **state)
{
    struct fixture *f = *state;
    size_t len;
    char *gz = export(f, "pprof", 0, &len);
    struct pprof_summary s = pprof_decode(gz, len);

    assert_int_equal(s.nr_types, 4);
    assert_int_equal(s.first_string_len, 0);
    assert_int_equal(s.nr_samples, 3);
    assert_int_equal(s.sums[0], XT_NR_ALLOCS);
    assert_int_equal(s.sums[1], XT_ALLOC_BYTES);
    assert_int_equal(s.sums[2], XT_LEAKED_BLOCKS);
    assert_int_equal(s.sums[3], XT_LEAKED_BYTES);
    free(gz);
}

/* A profile's samples, each "values|addresses" (its locations' addresses,
 * leaf first), sorted: the same whatever the order of its fields and its
 * ids. At most 16 samples, each part of at most 63 characters; returns how
 * many. */
#define SAMPLE_LEN 128
static int by_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

static size_t pprof_samples(const char *gz, size_t len, char out[16][SAMPLE_LEN])
{
    uint64_t loc_id[64], loc_addr[64];
    size_t n, nr_locs = 0, nr = 0;
    uint8_t *pb = gunzip(gz, len, &n);

    for (int pass = 0; pass < 2; pass++) { /* locations, then samples */
        const uint8_t *p = pb, *end = pb + n;
        while (p < end) {
            uint64_t key = pb_varint(&p, end), field = key >> 3, id = 0, addr = 0;
            if ((key & 7) == 0) {
                pb_varint(&p, end);
                continue;
            }
            uint64_t l = pb_varint(&p, end);
            const uint8_t *m = p, *mend = p + l;
            char ids[SAMPLE_LEN / 2] = "", vals[SAMPLE_LEN / 2] = "";
            p = mend;
            if ((pass == 0 && field != 4) || (pass == 1 && field != 2))
                continue;
            while (m < mend) {
                uint64_t k = pb_varint(&m, mend);
                if ((k & 7) == 0) { /* location: 1 id, 3 address */
                    uint64_t v = pb_varint(&m, mend);
                    id = k >> 3 == 1 ? v : id;
                    addr = k >> 3 == 3 ? v : addr;
                    continue;
                }
                uint64_t vlen = pb_varint(&m, mend);
                const uint8_t *v = m, *vend = m + vlen;
                char *to = k >> 3 == 1 ? ids : k >> 3 == 2 ? vals : NULL;
                m = vend;
                while (to && v < vend) { /* packed: 1 location ids, 2 values */
                    uint64_t x = pb_varint(&v, vend);
                    for (size_t i = 0; to == ids && i < nr_locs; i++)
                        if (loc_id[i] == x)
                            x = loc_addr[i];
                    snprintf(to + strlen(to), SAMPLE_LEN / 2 - strlen(to),
                             to == ids ? "%s0x%llx" : "%s%llu", *to ? "," : "",
                             (unsigned long long)x);
                }
            }
            if (pass == 0) {
                assert_true(nr_locs < 64);
                loc_id[nr_locs] = id, loc_addr[nr_locs++] = addr;
                continue;
            }
            assert_true(nr < 16);
            snprintf(out[nr++], SAMPLE_LEN, "%s|%s", vals, ids);
        }
    }
    free(pb);
    qsort(out, nr, SAMPLE_LEN, by_text);
    return nr;
}

/* The images an export said it wrote (ana_export_options.image_done),
 * each let go by the reader at once: no stack of it is read after. */
struct done {
    struct fmt_reader *r;
    uint32_t image[8];
    uint64_t end_ns[8];
    unsigned nr;
};

static int image_done(void *arg, uint32_t image, uint64_t end_ns)
{
    struct done *d = arg;

    assert_true(d->nr < 8);
    d->image[d->nr] = image;
    d->end_ns[d->nr++] = end_ns;
    return fmt_reader_forget_image(d->r, image);
}

/* A tree's profile written at each process's end, its stacks let go as
 * soon as it is written: the samples of the one written at the end. The
 * images' locations are their own, at the addresses they recorded (a
 * module mapped at two bases, whose frames the symbolizer shares). */
static void test_pprof_tree(void **state)
{
    static const char *const want[] = {
        "1,70,0,0|0x2100,0x1200,0x1300",
        "1,100,1,100|0x1100,0x1200,0x1300",
        "1,300,1,300|0x5100,0x5200",
        "1,600,1,600|0x9100,0x9200",
        "1,50,0,0|0x5300",
        "2,48,1,40|",
    };
    char err[600], got[2][16][SAMPLE_LEN];
    int fd = memfd_create("tree", MFD_CLOEXEC);
    size_t n[2];

    (void)state;
    assert_int_equal(xtrace_write_tree(fd), 0);
    for (int stream = 0; stream < 2; stream++) {
        struct fixture f = {.trace_fd = fd};
        struct done d = {0};
        size_t len;

        assert_int_equal(fmt_reader_open_fd_flags(&f.r, fd, "tree",
                                                  stream ? FMT_OPEN_STACKS_LATER : 0, err,
                                                  sizeof(err)),
                         0);
        d.r = f.r;
        struct ana_export_output out = {.format = ana_exporter_find("pprof")};
        assert_int_equal(ana_export_streams(f.r, &out, 1), true);
        char *gz = export_with(&f, "pprof", stream ? image_done : NULL, &d, &len);
        n[stream] = pprof_samples(gz, len, got[stream]);
        free(gz);
        fmt_reader_close(f.r);
        /* The two children, at their exits; the first, still running, not. */
        assert_int_equal(d.nr, stream ? 2 : 0);
        if (stream) {
            assert_int_equal(d.image[0], 1);
            assert_int_equal(d.end_ns[0], 20 * 1000000ull);
            assert_int_equal(d.image[1], 2);
            assert_int_equal(d.end_ns[1], 3000 * 1000000ull);
        }
    }
    close(fd);
    assert_int_equal(n[0], sizeof(want) / sizeof(want[0]));
    assert_int_equal(n[1], n[0]);
    for (size_t i = 0; i < n[0]; i++) {
        int found = 0;
        for (size_t k = 0; k < n[0]; k++)
            found |= !strcmp(got[0][k], want[i]);
        if (!found)
            fail_msg("no sample %s", want[i]);
        assert_string_equal(got[1][i], got[0][i]);
    }
}

/* The last number of each line, summed (folded stacks). */
static uint64_t folded_sum(const char *text)
{
    uint64_t sum = 0;

    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n'), *sp = nl;
        assert_non_null(nl);
        while (sp > l && sp[-1] != ' ')
            sp--;
        assert_true(sp > l);
        sum += strtoull(sp, NULL, 10);
        l = nl + 1;
    }
    return sum;
}

/* The export fmt of xtrace_write_tree's trace in fd: streamed, each of
 * the two children let go as soon as it is written, or from memory. */
static char *tree_export(int fd, const char *fmt, enum ana_export_cost cost, bool stream)
{
    struct fixture f = {.trace_fd = fd};
    struct done d = {0};
    char err[600];

    assert_int_equal(fmt_reader_open_fd_flags(&f.r, fd, "tree", stream ? FMT_OPEN_STACKS_LATER : 0,
                                              err, sizeof(err)),
                     0);
    d.r = f.r;
    struct ana_export_output out = {.format = ana_exporter_find(fmt)};
    assert_int_equal(ana_export_streams(f.r, &out, 1), true);
    char *text = export_opt(&f, fmt, cost, stream ? image_done : NULL, &d, NULL);
    fmt_reader_close(f.r);
    assert_int_equal(d.nr, stream ? 2 : 0);
    return text;
}

/* A folded file's lines of the same text summed, in the order of the
 * first of them (a tree's folded file against the whole model's). */
static char *folded_summed(const char *text)
{
    size_t cap = strlen(text) + 1, nr = 0;
    const char **line = calloc(cap, sizeof(*line));
    size_t *len = calloc(cap, sizeof(*len));
    uint64_t *cost = calloc(cap, sizeof(*cost));
    char *out = calloc(cap, 1), *o = out;

    assert_true(line && len && cost && out);
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n'), *sp = strrchr(l, ' ');
        size_t k = 0;

        assert_non_null(nl);
        for (sp = nl; sp[-1] != ' '; sp--)
            ;
        while (k < nr && (len[k] != (size_t)(sp - 1 - l) || memcmp(line[k], l, len[k])))
            k++;
        if (k == nr)
            line[nr] = l, len[nr++] = (size_t)(sp - 1 - l);
        cost[k] += strtoull(sp, NULL, 10);
        l = nl + 1;
    }
    for (size_t k = 0; k < nr; k++)
        o += sprintf(o, "%.*s %llu\n", (int)len[k], line[k], (unsigned long long)cost[k]);
    free(line);
    free(len);
    free(cost);
    return out;
}

/* A tree's folded lines made at each process's end, its stacks let go as
 * soon as they are read: each text once, its cost the sum of the whole
 * model's lines of that text (a module mapped at two bases: the same
 * frames), in the order of the first, for every cost. */
static void test_folded_tree(void **state)
{
    static const enum ana_export_cost costs[] = {
        ANA_COST_ALLOCATIONS, ANA_COST_BYTES, ANA_COST_LEAKED, ANA_COST_PEAK, ANA_COST_TEMPORARY};
    int fd = memfd_create("tree", MFD_CLOEXEC);

    (void)state;
    assert_int_equal(xtrace_write_tree(fd), 0);
    for (size_t c = 0; c < sizeof(costs) / sizeof(costs[0]); c++) {
        char *got[2] = {tree_export(fd, "folded", costs[c], false),
                        tree_export(fd, "folded", costs[c], true)};
        char *summed = folded_summed(got[0]);
        if (costs[c] == ANA_COST_PEAK) {
            /* The tree's peak, 708 bytes at 1502 ms: image 2's 8 bytes of
             * no stack, not image 1's 40 too (ended at 20 ms), which the
             * whole model's one site of stack 0 (every image's) counts. */
            assert_string_equal(got[1], "[unknown] 8\n0x1300;0x1200;0x1100 100\n"
                                        "libc#.so+0x200;libc#.so+0x100 600\n");
            assert_string_equal(strchr(got[1], '\n'), strchr(summed, '\n'));
        } else {
            assert_string_equal(got[1], summed);
        }
        if (costs[c] == ANA_COST_BYTES)
            assert_true(strlen(got[1]) < strlen(got[0])); /* two lines summed */
        free(summed);
        free(got[0]);
        free(got[1]);
    }
    close(fd);
}

/* A tree's export both ways: got[0] from memory, got[1] streamed, the
 * trace's processes let go at their ends. */
static void tree_both(const char *fmt, char *got[2])
{
    int fd = memfd_create("tree", MFD_CLOEXEC);

    assert_int_equal(xtrace_write_tree(fd), 0);
    got[0] = tree_export(fd, fmt, 0, false);
    got[1] = tree_export(fd, fmt, 0, true);
    close(fd);
}

/* A tree's export both ways: the same bytes, returned. */
static char *tree_same(const char *fmt)
{
    char *got[2];

    tree_both(fmt, got);
    assert_string_equal(got[1], got[0]);
    free(got[0]);
    return got[1];
}

/* A tree's CSV, each process's live blocks taken at its end, its stacks
 * let go: the bytes of the one written from memory. */
static void test_csv_tree(void **state)
{
    char *got = tree_same("csv");
    size_t lines = 0;

    (void)state;
    /* The header, 3 blocks freed, 4 live at the end. */
    for (const char *p = got; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, 8);
    free(got);
}

/* A tree's heaptrack file, each process's ips, traces and infos dropped
 * a second after its end (its stacks let go at once): the bytes of the one
 * that keeps them all. The first child's tables go at the second's end,
 * 2.98 s after its own, and its infos (300 and 50 bytes; the 40 of no
 * stack are every image's and stay) when the blocks held at the peak's
 * tick are settled: one of their slots serves the 70 bytes the first
 * process allocates last, whose info is still numbered after every other;
 * then the last tick, at the trace's end (4001 ms). */
static void test_heaptrack_tree(void **state)
{
    static const char tail[] = "a 46 9\n+ 6\n- 6\nc fa1\n";
    char *got = tree_same("heaptrack");

    (void)state;
    assert_string_equal(got + strlen(got) - strlen(tail), tail);
    free(got);
}

/* A tree's DHAT file, its program points folded in one pass, its
 * processes' stacks let go at their exits: the bytes of the one written
 * from the whole model (program points by their lowest stack, frames as
 * the program points first name them). */
static void test_dhat_tree(void **state)
{
    char *got = tree_same("dhat");

    (void)state;
    /* The blocks of no stack of both children are one program point, out
     * of memory when the first exits, read back for the second: the
     * first's 40 bytes live to the end, the second's 8 freed. */
    assert_non_null(strstr(got, "\n{\"tb\":48,\"tbk\":2,\"tl\":3990000,\"mb\":48,\"mbk\":2,"
                                "\"gb\":48,\"gbk\":2,\"eb\":40,\"ebk\":1,\"fs\":[1]},"));
    free(got);
}

/* A tree's massif file, what each process left folded a second after its
 * exit, its stacks let go then, and the end's tree made as deep as it is
 * shown: the bytes of the one written from the whole model, but for one
 * number. At the peak (1502 ms) image 2's 8 bytes of no stack count, not
 * image 1's 40 too (ended at 20 ms), which the whole model's one site of
 * stack 0 (every image's) counts: the tree adds up to mem_heap_B, 708. */
static void test_massif_tree(void **state)
{
    static const char peak[] = "mem_heap_B=708\nmem_heap_extra_B=0\nmem_stacks_B=0\n"
                               "heap_tree=peak\nn2: 708 (heap allocation functions)";
    char *got[2], *at;

    (void)state;
    tree_both("massif", got);
    assert_non_null(strstr(got[1], peak));
    assert_non_null((at = strstr(got[0], "heap_tree=peak\nn2: 748 (heap")));
    memcpy(at + strlen("heap_tree=peak\nn2: "), "708", 3);
    assert_string_equal(got[1], got[0]);
    /* The end's tree: every process's leaks. */
    assert_non_null(strstr(got[1], "heap_tree=detailed\nn3: 1040 (heap allocation functions)"));
    free(got[0]);
    free(got[1]);
}

/* Every format on random three-thread traces: the numbers each keeps add
 * up to the model's (which the unit tests of the core check in turn). */
static void test_random_all(void **state)
{
    (void)state;
    for (uint64_t seed = 100; seed < 106; seed++) {
        struct fixture f = {.trace_fd = memfd_create("random", MFD_CLOEXEC)};
        struct ana_xmodel m;
        char err[600], want[96];
        size_t len;

        assert_int_equal(xtrace_write_random(f.trace_fd, 5000, seed), 0);
        assert_int_equal(fmt_reader_open_fd(&f.r, f.trace_fd, "random", err, sizeof(err)), 0);
        assert_int_equal(ana_xmodel_build(f.r, NULL, &m), 0);

        static const enum ana_export_cost costs[] = {ANA_COST_ALLOCATIONS, ANA_COST_BYTES,
                                                     ANA_COST_LEAKED, ANA_COST_PEAK,
                                                     ANA_COST_TEMPORARY};
        const uint64_t sums[] = {m.nr_allocs, m.alloc_bytes, m.live_bytes, m.peak_bytes,
                                 m.nr_temporary};
        for (int i = 0; i < 5; i++) {
            char *t = export(&f, "folded", costs[i], NULL);
            assert_int_equal(folded_sum(t), sums[i]);
            free(t);
        }

        char *t = export(&f, "massif", 0, NULL);
        snprintf(want, sizeof(want),
                 "mem_heap_B=%llu\nmem_heap_extra_B=0\nmem_stacks_B=0\n"
                 "heap_tree=peak\nn",
                 (unsigned long long)m.peak_bytes);
        const char *peak = strstr(t, want);
        assert_non_null(peak);
        assert_int_equal(strtoull(strchr(peak + strlen(want), ' ') + 1, NULL, 10), m.peak_bytes);
        free(t);

        t = export(&f, "dhat", 0, NULL);
        uint64_t tb = 0, gb = 0, eb = 0;
        for (const char *p = strstr(t, "\n{\"tb\""); p; p = strstr(p + 1, "\n{\"tb\"")) {
            tb += strtoull(p + 7, NULL, 10);
            gb += strtoull(strstr(p, "\"gb\":") + 5, NULL, 10);
            eb += strtoull(strstr(p, "\"eb\":") + 5, NULL, 10);
        }
        assert_int_equal(tb, m.alloc_bytes);
        assert_int_equal(gb, m.peak_bytes);
        assert_int_equal(eb, m.live_bytes);
        free(t);

        t = export(&f, "pprof", 0, &len);
        struct pprof_summary s = pprof_decode(t, len);
        assert_int_equal(s.sums[0], m.nr_allocs);
        assert_int_equal(s.sums[1], m.alloc_bytes);
        assert_int_equal(s.sums[2], m.live_blocks);
        assert_int_equal(s.sums[3], m.live_bytes);
        free(t);

        t = export(&f, "csv", 0, NULL);
        uint64_t rows = 0;
        for (const char *p = strchr(t, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
            rows++;
        assert_int_equal(rows, m.nr_allocs);
        free(t);

        ana_xmodel_release(&m);
        fmt_reader_close(f.r);
        close(f.trace_fd);
    }
}

/* The "-- query: NAME" block of docs/export-tables.md, up to its ';'. */
static char *doc_query(const char *name)
{
    char path[4096], marker[64], *doc, *q, *end;
    FILE *fp;
    long n;

    snprintf(path, sizeof(path), "%s/docs/export-tables.md", MS_SOURCE_DIR);
    assert_non_null(fp = fopen(path, "r"));
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    rewind(fp);
    assert_non_null(doc = malloc((size_t)n + 1));
    assert_int_equal(fread(doc, 1, (size_t)n, fp), (size_t)n);
    doc[n] = 0;
    fclose(fp);
    snprintf(marker, sizeof(marker), "-- query: %s\n", name);
    assert_non_null(q = strstr(doc, marker));
    q += strlen(marker);
    assert_non_null(end = strstr(q, ";\n"));
    end[1] = 0;
    q = strdup(q);
    free(doc);
    return q;
}

static sqlite3 *export_db(struct fixture *f, char *path, size_t size)
{
    struct ana_export_options o = {.massif_threshold = -1};
    struct ana_export_output out = {.format = ana_exporter_find("sqlite"), .fd = -1};
    int fd;
    sqlite3 *db;

    o.sym.raw = true;
    snprintf(path, size, "/tmp/test_ana_export.XXXXXX");
    assert_true((fd = mkstemp(path)) >= 0);
    close(fd);
    unlink(path);
    out.path = path;
    assert_int_equal(ana_export_run(f->r, &o, &out, 1), 0);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    return db;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    return st;
}

static int64_t one(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = prepare(db, sql);
    int64_t v;

    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The leaks query gives the analysis core's live bytes and blocks per stack. */
static void test_sqlite_leaks(void **state)
{
    struct fixture *f = *state;
    char path[64], *sql = doc_query("leaks");
    sqlite3 *db = export_db(f, path, sizeof(path));
    struct ana_model *m;
    struct fmt_event ev;
    uint64_t bytes = 0;
    int rc, rows = 0;

    assert_int_equal(ana_model_create(&m, NULL), 0);
    assert_int_equal(fmt_reader_seek_chunk(f->r, 0), 0);
    while ((rc = fmt_reader_next(f->r, &ev)) > 0)
        assert_int_equal(ana_model_event(m, &ev), 0);
    assert_int_equal(rc, 0);
    ana_model_finish(m);

    sqlite3_stmt *st = prepare(db, sql);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t stack = (uint32_t)sqlite3_column_int64(st, 0);
        const struct ana_site *s = ana_model_site(m, stack);
        assert_non_null(s);
        assert_int_equal(sqlite3_column_int64(st, 1), s->live_blocks);
        assert_int_equal(sqlite3_column_int64(st, 2), s->live_bytes);
        bytes += (uint64_t)sqlite3_column_int64(st, 2);
        rows++;
    }
    assert_int_equal(rc, SQLITE_DONE);
    assert_int_equal(rows, 2);
    assert_int_equal(bytes, ana_model_total(m)->heap);
    assert_int_equal(bytes, XT_LEAKED_BYTES);
    sqlite3_finalize(st);

    /* The rest of the schema, in exact numbers. */
    assert_int_equal(one(db, "SELECT COUNT(*) FROM allocations"), XT_NR_ALLOCS);
    assert_int_equal(one(db, "SELECT SUM(temporary) FROM allocations"), XT_NR_TEMPORARY);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM threads"), 2);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM processes WHERE pid = 4100"), 1);
    assert_int_equal(one(db, "SELECT value FROM meta WHERE key = 'complete'"), 1);
    /* Frames as a tree: stacks A and B share their two outer frames. */
    assert_int_equal(one(db, "SELECT COUNT(*) FROM frames"), 6);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM frames WHERE parent IS NULL"), 2);
    assert_int_equal(one(db, "SELECT p.address FROM stacks s JOIN frames f ON f.id = s.frame "
                             "JOIN frames p ON p.id = f.parent WHERE s.id = 4"),
                     0x1200);
    /* Mappings: 3 pages reserved at 2 ms, page 0 committed at 3 ms, page 2
     * unmapped at 4 ms, the rest at 12 ms; one page committed to the end. */
    assert_int_equal(one(db, "SELECT COUNT(*) FROM mappings"), 2);
    assert_int_equal(one(db, "SELECT unmap_ns FROM mappings WHERE address = 0x7f0000000000"),
                     12000000);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM mappings WHERE unmap_ns IS NULL"), 1);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM mapping_states"), 5);
    assert_int_equal(one(db, "SELECT SUM(size) FROM mapping_states WHERE state = 'reserved' AND "
                             "start_ns = 2000000 AND end_ns = 3000000"),
                     4096);
    assert_int_equal(one(db, "SELECT SUM(size) FROM mapping_states WHERE state = 'reserved' AND "
                             "end_ns = 4000000"),
                     4096);
    assert_int_equal(one(db, "SELECT SUM(size) FROM mapping_states WHERE state = 'reserved' AND "
                             "end_ns = 12000000"),
                     4096);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM mapping_states WHERE state = 'committed' AND "
                             "start_ns = 3000000 AND end_ns = 12000000 AND size = 4096"),
                     1);
    assert_int_equal(one(db, "SELECT COUNT(*) FROM mapping_states WHERE state = 'committed' AND "
                             "end_ns IS NULL"),
                     1);
    sqlite3_close(db);
    unlink(path);
    ana_model_destroy(m);
    free(sql);
}

/* The window queries give the analysis core's WPA classes, per stack and
 * in total, for windows that cut blocks in every way. */
/* The docs' window queries against ana_window_compute for [t0, t1]: every
 * (stack, class) row and the totals. */
static void check_window(struct fixture *f, sqlite3 *db, const char *sql, const char *totals,
                         uint64_t t0, uint64_t t1)
{
    static const char *const names[ANA_NR_WPA] = {"AIFI", "AIFO", "AOFI", "AOFO"};
    struct ana_window win;
    struct ana_window_key *keys;
    uint64_t seen = 0, want = 0;
    int rc;

    assert_int_equal(ana_window_compute(&win, f->r, NULL, t0, t1, ANA_WINDOW_BY_STACK, NULL, NULL),
                     0);
    long nr = ana_window_keys(&win, &keys);
    assert_true(nr >= 0);
    for (long k = 0; k < nr; k++)
        for (int c = 0; c < ANA_NR_WPA; c++)
            want += keys[k].c.nr[c] != 0;

    sqlite3_stmt *st = prepare(db, sql);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":t0"), (int64_t)t0);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":t1"), (int64_t)t1);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t stack = (uint64_t)sqlite3_column_int64(st, 0);
        const char *cls = (const char *)sqlite3_column_text(st, 1);
        long k;
        int c;
        for (c = 0; c < ANA_NR_WPA && strcmp(cls, names[c]); c++)
            ;
        assert_true(c < ANA_NR_WPA);
        for (k = 0; k < nr && keys[k].key != stack; k++)
            ;
        if (k == nr)
            fail_msg("window [%llu, %llu]: stack %llu class %s only in SQL", (unsigned long long)t0,
                     (unsigned long long)t1, (unsigned long long)stack, cls);
        assert_int_equal(sqlite3_column_int64(st, 2), keys[k].c.nr[c]);
        assert_int_equal(sqlite3_column_int64(st, 3), keys[k].c.bytes[c]);
        seen++;
    }
    assert_int_equal(rc, SQLITE_DONE);
    assert_int_equal(seen, want);
    sqlite3_finalize(st);

    const struct ana_wpa *img = &win.images[0];
    st = prepare(db, totals);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":t0"), (int64_t)t0);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":t1"), (int64_t)t1);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), img->bytes[ANA_AIFI] + img->bytes[ANA_AIFO]);
    assert_int_equal(sqlite3_column_int64(st, 1), ana_wpa_impacting_size(img));
    sqlite3_finalize(st);
    free(keys);
    ana_window_release(&win);
}

/* The window queries give the analysis core's WPA classes, per stack and
 * in total, for windows that cut blocks in every way. */
static void test_sqlite_window(void **state)
{
    struct fixture *f = *state;
    char path[64], *sql = doc_query("window"), *totals = doc_query("window-totals");
    sqlite3 *db = export_db(f, path, sizeof(path));
    static const uint64_t windows[][2] = {
        {0, 20000000},       {5000000, 9000000},  {6000000, 6000000},
        {9500000, 12000000}, {3000000, 14000000},
    };

    for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
        check_window(f, db, sql, totals, windows[w][0], windows[w][1]);
    sqlite3_close(db);
    unlink(path);
    free(sql);
    free(totals);
}

/* The same on random traces (several chunks, reallocs, three threads) and
 * random windows, and the leaks query against the core's live bytes. */
static void test_sqlite_random(void **state)
{
    char *sql = doc_query("window"), *totals = doc_query("window-totals");
    uint64_t rng = 12345;

    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        struct fixture f = {.trace_fd = memfd_create("random", MFD_CLOEXEC)};
        struct ana_xmodel m;
        char err[600], path[64];

        assert_int_equal(xtrace_write_random(f.trace_fd, 20000, seed), 0);
        assert_int_equal(fmt_reader_open_fd(&f.r, f.trace_fd, "random", err, sizeof(err)), 0);
        assert_int_equal(ana_xmodel_build(f.r, NULL, &m), 0);
        sqlite3 *db = export_db(&f, path, sizeof(path));
        assert_int_equal(one(db, "SELECT COUNT(*) FROM allocations"), m.nr_allocs);
        assert_int_equal(one(db, "SELECT SUM(size) FROM allocations WHERE free_ns IS NULL"),
                         m.live_bytes);
        assert_int_equal(one(db, "SELECT SUM(temporary) FROM allocations"), m.nr_temporary);
        for (int w = 0; w < 5; w++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            uint64_t a = rng % (m.end_ts_ns + 2), b = (rng >> 32) % (m.end_ts_ns + 2);
            check_window(&f, db, sql, totals, a < b ? a : b, a < b ? b : a);
        }
        sqlite3_close(db);
        unlink(path);
        ana_xmodel_release(&m);
        fmt_reader_close(f.r);
        close(f.trace_fd);
    }
    free(sql);
    free(totals);
}

/* Every table's rows, in rowid order, as text: a database's content. */
static char *db_content(const char *path)
{
    static const char *const tables[] = {"meta",        "processes", "threads",
                                         "modules",     "frames",    "stacks",
                                         "allocations", "mappings",  "mapping_states"};
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    sqlite3 *db;

    assert_non_null(out);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        char sql[128];
        sqlite3_stmt *st;

        snprintf(sql, sizeof(sql), "SELECT * FROM %s ORDER BY rowid", tables[t]);
        st = prepare(db, sql);
        while (sqlite3_step(st) == SQLITE_ROW)
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const unsigned char *v = sqlite3_column_text(st, c);
                size_t n = v ? strlen((const char *)v) : 4;
                while (len + n + 2 > cap)
                    assert_non_null(out = realloc(out, cap *= 2));
                len += (size_t)sprintf(out + len, "%s%c", v ? (const char *)v : "NULL",
                                       c + 1 < sqlite3_column_count(st) ? '|' : '\n');
            }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}

/* ana_progress_fn: counts the passes (ana_scan's last call of each). */
static void count_pass(void *arg, uint64_t ts_ns, uint64_t last_ns)
{
    if (ts_ns == last_ns)
        (*(unsigned *)arg)++;
}

/* Every format in one export: each output equals its own export byte for
 * byte (a database: row for row), the stream formats in one read of the
 * trace, and those that place the peak in their stream in two. */
static void test_several_in_one_read(void **state)
{
    struct fixture *f = *state;
    struct ana_export_output outs[8];
    char db[2][64];
    unsigned n = 0, passes;

    for (const struct ana_exporter *x = ana_exporters; x->name; x++, n++) {
        outs[n] = (struct ana_export_output){.format = x, .fd = memfd_create("out", MFD_CLOEXEC)};
        assert_true(outs[n].fd >= 0);
        if (x->compress == ANA_COMPRESS_DATABASE) {
            snprintf(db[0], sizeof(db[0]), "/tmp/test_ana_export.all.%d.db", (int)getpid());
            unlink(db[0]);
            outs[n].path = db[0];
        }
    }
    struct ana_export_options o = {.massif_threshold = -1, .progress = count_pass};
    o.sym.raw = true;
    o.progress_arg = &passes;
    passes = 0;
    assert_int_equal(ana_export_run(f->r, &o, outs, n), 0);
    assert_int_equal(passes, 2);
    for (unsigned i = 0; i < n; i++) {
        const struct ana_exporter *x = outs[i].format;
        if (x->compress == ANA_COMPRESS_DATABASE) {
            struct ana_export_output one = {.format = x, .fd = -1, .path = db[1]};
            snprintf(db[1], sizeof(db[1]), "/tmp/test_ana_export.one.%d.db", (int)getpid());
            unlink(db[1]);
            assert_int_equal(ana_export_run(f->r, &o, &one, 1), 0);
            char *a = db_content(db[0]), *b = db_content(db[1]);
            assert_string_equal(a, b);
            free(a);
            free(b);
            unlink(db[0]);
            unlink(db[1]);
        } else {
            size_t la, lb;
            off_t end = lseek(outs[i].fd, 0, SEEK_END);
            char *a = malloc((size_t)end + 1), *b = export(f, x->name, 0, &lb);
            assert_int_equal(pread(outs[i].fd, a, (size_t)end, 0), end);
            la = (size_t)end;
            if (la != lb || memcmp(a, b, la))
                fail_msg("--to %s: one of several differs from its own export", x->name);
            free(a);
            free(b);
        }
        close(outs[i].fd);
    }
    /* Without a format that places the peak in its stream: one read. */
    const char *const one_read[] = {"folded", "pprof", "csv"};
    for (unsigned i = 0; i < 3; i++) {
        outs[i] = (struct ana_export_output){.format = ana_exporter_find(one_read[i]),
                                             .fd = open("/dev/null", O_WRONLY | O_CLOEXEC)};
        assert_true(outs[i].fd >= 0);
    }
    passes = 0;
    assert_int_equal(ana_export_run(f->r, &o, outs, 3), 0);
    assert_int_equal(passes, 1);
    for (unsigned i = 0; i < 3; i++)
        close(outs[i].fd);
}

/* A full disk: the exporters report -ENOSPC as the output's failure. */
static void test_disk_full(void **state)
{
    struct fixture *f = *state;
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

    if (fd < 0)
        skip();
    for (const struct ana_exporter *x = ana_exporters; x->name; x++) {
        struct ana_export_options o = {.massif_threshold = -1};
        struct ana_export_output out = {.format = x, .fd = fd, .path = "/dev/full"};

        if (x->compress == ANA_COMPRESS_DATABASE)
            continue;
        o.sym.raw = true;
        assert_int_equal(ana_export_run(f->r, &o, &out, 1), -ENOSPC);
        assert_int_equal(out.failed, 1);
    }
    close(fd);
}

static void test_names(void **state)
{
    enum ana_export_cost cost;
    unsigned n = 0;

    (void)state;
    assert_non_null(ana_exporter_find("heaptrack"));
    assert_string_equal(ana_exporter_find("pprof")->name, "pprof");
    assert_null(ana_exporter_find("callgrind"));
    /* The one table: every entry whole, its help lines fit export --help. */
    for (const struct ana_exporter *x = ana_exporters; x->name; x++, n++) {
        assert_non_null(x->run);
        assert_true(strlen(x->help) > 0 && x->help[strlen(x->help) - 1] == '\n');
        for (const char *l = x->help, *nl; (nl = strchr(l, '\n')); l = nl + 1)
            assert_true(nl - l <= 62);
    }
    assert_int_equal(n, 7);
    assert_int_equal(ana_export_cost_parse("temporary", &cost), 0);
    assert_int_equal(cost, ANA_COST_TEMPORARY);
    assert_int_equal(ana_export_cost_parse("", &cost), -EINVAL);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_massif, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dhat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heaptrack, setup, teardown),
        cmocka_unit_test(test_heaptrack_two_at_peak),
        cmocka_unit_test(test_heaptrack_spikes),
        cmocka_unit_test(test_heaptrack_random),
        cmocka_unit_test_setup_teardown(test_pprof, setup, teardown),
        cmocka_unit_test(test_pprof_tree),
        cmocka_unit_test(test_folded_tree),
        cmocka_unit_test(test_csv_tree),
        cmocka_unit_test(test_heaptrack_tree),
        cmocka_unit_test(test_dhat_tree),
        cmocka_unit_test(test_massif_tree),
        cmocka_unit_test(test_random_all),
        cmocka_unit_test_setup_teardown(test_sqlite_leaks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sqlite_window, setup, teardown),
        cmocka_unit_test(test_sqlite_random),
        cmocka_unit_test_setup_teardown(test_several_in_one_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
    };

    /* For the e2e tests: write the synthetic trace (or a big one) and exit. */
    if (argc >= 3 && !strcmp(argv[1], "--write-trace")) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int rc = fd < 0      ? -errno
                 : argc >= 4 ? xtrace_write_big(fd, strtoull(argv[3], NULL, 10))
                             : xtrace_write(fd);
        if (rc || (fd >= 0 && close(fd))) {
            fprintf(stderr, "test_ana_export: %s: %s\n", argv[2], strerror(rc ? -rc : errno));
            return 1;
        }
        return 0;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
