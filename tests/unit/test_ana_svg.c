/* SPDX-License-Identifier: MIT */
/* The SVG writer (escaping, units, ticks), the plots and the flame graph's
 * SVG and folded output, on hand-made inputs with exact expectations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"
#include "analysis/pictures/ana_plot.h"
#include "analysis/pictures/ana_svg.h"

#define EVIL "</script><img src=x onerror=alert(1)>"
#define EVIL_XML "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"

/* What a writer produced, as one NUL-terminated string. */
struct mem {
    char *buf;
    size_t len;
    FILE *f;
};

static FILE *mem_open(struct mem *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
    return m->f;
}

static char *mem_close(struct mem *m)
{
    assert_int_equal(fclose(m->f), 0);
    return m->buf;
}

/* ana_xml_escape of the len bytes at s must write want. */
static void expect_escaped(const char *s, size_t len, const char *want)
{
    struct mem m;

    ana_xml_escape(mem_open(&m), s, len);
    char *out = mem_close(&m);
    assert_string_equal(out, want);
    free(out);
}

static void test_escape_markup(void **state)
{
    (void)state;
    expect_escaped(EVIL, strlen(EVIL), EVIL_XML);
    expect_escaped("a&b\"c'd", 7, "a&amp;b&quot;c&#39;d");
}

static void test_escape_bytes(void **state)
{
    (void)state;
    /* Valid UTF-8 passes; invalid bytes, a truncated sequence, an overlong
     * '/', a surrogate and forbidden controls become U+FFFD. */
    expect_escaped("caf\xc3\xa9 \xe2\x82\xac", 9, "caf\xc3\xa9 \xe2\x82\xac");
    expect_escaped("a\xff"
                   "b",
                   3,
                   "a\xef\xbf\xbd"
                   "b");
    expect_escaped("x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd");
    expect_escaped("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");
    expect_escaped("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    expect_escaped("a\x01"
                   "b\tc\0d",
                   7,
                   "a\xef\xbf\xbd"
                   "b\tc\xef\xbf\xbd"
                   "d");
}

static void test_units(void **state)
{
    char b[64];

    (void)state;
    assert_string_equal(ana_unit_format(ANA_UNIT_BYTES, 0, b, sizeof(b)), "0 B");
    assert_string_equal(ana_unit_format(ANA_UNIT_BYTES, 512, b, sizeof(b)), "512 B");
    assert_string_equal(ana_unit_format(ANA_UNIT_BYTES, 1536, b, sizeof(b)), "1.5 KiB");
    assert_string_equal(ana_unit_format(ANA_UNIT_BYTES, 10e6, b, sizeof(b)), "9.54 MiB");
    assert_string_equal(ana_unit_format(ANA_UNIT_BYTES, 3ull << 30, b, sizeof(b)), "3 GiB");
    assert_string_equal(ana_unit_format(ANA_UNIT_NS, 250, b, sizeof(b)), "250 ns");
    assert_string_equal(ana_unit_format(ANA_UNIT_NS, 1.5e6, b, sizeof(b)), "1.5 ms");
    assert_string_equal(ana_unit_format(ANA_UNIT_NS, 2e9, b, sizeof(b)), "2 s");
    assert_string_equal(ana_unit_format(ANA_UNIT_COUNT, 12000, b, sizeof(b)), "12k");
    assert_string_equal(ana_unit_format(ANA_UNIT_COUNT, 7, b, sizeof(b)), "7");
}

static void test_ticks_linear(void **state)
{
    struct ana_axis a = {.lo = 0, .hi = 30e6, .p0 = 300, .p1 = 0, .unit = ANA_UNIT_BYTES};
    double t[32];
    size_t n;
    const double MiB = 1024.0 * 1024.0;

    (void)state;
    /* 28.6 MiB: steps of 5 MiB, and the axis rounds up to 30 MiB. */
    ana_axis_round_up(&a);
    assert_true(a.hi == 30 * MiB);
    n = ana_axis_ticks(&a, t, 32);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++)
        assert_true(t[i] == (double)i * 5 * MiB);
    assert_true(ana_axis_map(&a, 0) == 300);
    assert_true(ana_axis_map(&a, 15 * MiB) == 150);

    struct ana_axis s = {.lo = 0, .hi = 2.179e9, .p0 = 0, .p1 = 1000, .unit = ANA_UNIT_NS};
    n = ana_axis_ticks(&s, t, 32);
    assert_int_equal(n, 5); /* 0, 0.5, 1, 1.5, 2 s */
    assert_true(t[4] == 2e9);
}

static void test_ticks_log(void **state)
{
    struct ana_axis a = {
        .lo = 1, .hi = 1 << 20, .p0 = 0, .p1 = 100, .log = 1, .unit = ANA_UNIT_BYTES};
    struct ana_axis c = {.lo = 1, .hi = 1e6, .p0 = 0, .p1 = 100, .log = 1, .unit = ANA_UNIT_COUNT};
    double t[32];
    size_t n;

    (void)state;
    /* 2^0..2^20: every 4th power so at most eight ticks show. */
    n = ana_axis_ticks(&a, t, 32);
    assert_int_equal(n, 6);
    assert_true(t[0] == 1 && t[1] == 16 && t[5] == (double)(1 << 20));
    n = ana_axis_ticks(&c, t, 32);
    assert_int_equal(n, 7);
    assert_true(t[6] == 1e6);
    assert_true(ana_axis_map(&a, 1024) == 50);
}

static void test_timeline_svg(void **state)
{
    uint64_t ts[] = {0, 100000000, 200000000, 300000000};
    uint64_t heap[] = {0, 10000000, 30000000, 20000000};
    uint64_t cum[] = {0, 10000000, 30000000, 30000000};
    uint64_t rss_ts[] = {150000000}, rss[] = {33000000};
    struct ana_plot_timeline p = {
        .ts_ns = ts,
        .heap = heap,
        .cumulative = cum,
        .nr_points = 4,
        .rss_ts_ns = rss_ts,
        .rss = rss,
        .nr_rss = 1,
        .end_ns = 400000000,
        .peak_ns = 200000000,
        .peak_bytes = 30000000,
        .subtitle = "prog " EVIL,
    };
    struct ana_plot_frame fr;
    struct mem m;

    (void)state;
    assert_int_equal(ana_plot_timeline_svg(&p, mem_open(&m), 0, &fr), 0);
    char *svg = mem_close(&m);
    assert_non_null(strstr(svg, "<?xml"));
    assert_non_null(strstr(svg, "peak 28.6 MiB at 200 ms"));
    assert_non_null(strstr(svg, ">30 MiB</text>"));
    assert_non_null(strstr(svg, ">400 ms</text>"));
    assert_non_null(strstr(svg, "heap in use</text>"));
    assert_non_null(strstr(svg, "class=\"s-rss\""));
    assert_non_null(strstr(svg, "prog " EVIL_XML));
    assert_null(strstr(svg, "<img"));
    assert_true(fr.left < fr.right && fr.t_hi_ns == 400000000);
    free(svg);

    /* Inline: no prolog, an id for the page's script. */
    assert_int_equal(ana_plot_timeline_svg(&p, mem_open(&m), 1, NULL), 0);
    svg = mem_close(&m);
    assert_null(strstr(svg, "<?xml"));
    assert_non_null(strstr(svg, "id=\"timeline-svg\""));
    free(svg);
}

static void test_histogram_svg(void **state)
{
    struct ana_plot_bucket b[] = {
        {.lo = 32, .hi = 63, .count = 320, .bytes = 12800},
        {.lo = 8388608, .hi = 16777215, .count = 12, .bytes = 120000000},
    };
    struct ana_plot_histogram h = {.buckets = b, .nr_buckets = 2};
    struct mem m;

    (void)state;
    assert_int_equal(ana_plot_histogram_svg(&h, mem_open(&m), 0), 0);
    char *svg = mem_close(&m);
    assert_non_null(strstr(svg, "32 B .. 63 B: 320 allocations, 12.5 KiB"));
    assert_non_null(strstr(svg, "8 MiB .. 16 MiB: 12 allocations, 114 MiB"));
    assert_non_null(strstr(svg, "allocation size (requested)"));
    free(svg);
}

/* A flame tree over a fixed set of names: label = index. */
static const char *const names[] = {"main", "parse", "alloc_node", EVIL, "semi;colon\nline"};

static const char *name_of(void *arg, uint32_t label)
{
    (void)arg;
    return names[label];
}

static void build(struct ana_tree *t)
{
    /* Costs: allocations, bytes, leaked, peak, temporary. */
    static const uint32_t p1[] = {0, 1, 2}, p2[] = {0, 1}, p3[] = {0, 3}, p4[] = {0, 4};
    static const int64_t c1[] = {10, 1000, 40, 500, 3}, c2[] = {1, 24, 0, 24, 0},
                         c3[] = {5, 5000, 5000, 0, 0}, c4[] = {2, 2, 0, 0, 2};

    assert_int_equal(ana_tree_init(t, ANA_FLAME_NR_COSTS, 0), 0);
    assert_int_equal(ana_tree_add(t, p1, 3, c1), 0);
    assert_int_equal(ana_tree_add(t, p2, 2, c2), 0);
    assert_int_equal(ana_tree_add(t, p3, 2, c3), 0);
    assert_int_equal(ana_tree_add(t, p4, 2, c4), 0);
    assert_int_equal(ana_flame_sort(t, name_of, NULL), 0);
}

static void test_flame_folded(void **state)
{
    struct ana_tree t;
    struct mem m;

    (void)state;
    build(&t);
    assert_int_equal(ana_flame_write_folded(&t, name_of, NULL, mem_open(&m), ANA_FLAME_BYTES), 0);
    char *out = mem_close(&m);
    /* Self costs; ';' and line breaks in a name cannot split it. */
    assert_string_equal(out, "main;parse 24\n"
                             "main;parse;alloc_node 1000\n"
                             "main;" EVIL " 5000\n"
                             "main;semi:colon line 2\n");
    free(out);
    assert_int_equal(ana_flame_write_folded(&t, name_of, NULL, mem_open(&m), ANA_FLAME_LEAKED), 0);
    out = mem_close(&m);
    assert_string_equal(out, "main;parse;alloc_node 40\nmain;" EVIL " 5000\n");
    free(out);
    ana_tree_release(&t);
}

static void test_flame_sorted_by_name(void **state)
{
    struct ana_tree t;

    (void)state;
    build(&t);
    /* main's children in name order: "<" < "parse" < "semi...". */
    uint32_t main_node = t.nodes[0].first_child;
    uint32_t c = t.nodes[main_node].first_child;
    assert_string_equal(names[t.nodes[c].label], EVIL);
    c = t.nodes[c].next_sibling;
    assert_string_equal(names[t.nodes[c].label], "parse");
    c = t.nodes[c].next_sibling;
    assert_string_equal(names[t.nodes[c].label], "semi;colon\nline");
    assert_int_equal(t.nodes[c].next_sibling, ANA_TREE_NONE);
    ana_tree_release(&t);
}

static void test_flame_svg(void **state)
{
    struct ana_tree t;
    struct ana_flame_svg_options o = {.cost = ANA_FLAME_BYTES, .subtitle = "cmd " EVIL};
    struct mem m;

    (void)state;
    build(&t);
    assert_int_equal(ana_flame_write_svg(&t, name_of, NULL, mem_open(&m), &o), 0);
    char *svg = mem_close(&m);
    assert_non_null(strstr(svg, "<title>Flame graph: bytes</title>"));
    /* Each frame with its exact cost and share. */
    assert_non_null(strstr(svg, "<title>all (6,026 bytes, 5.88 KiB, 100.00%)</title>"));
    assert_non_null(strstr(svg, "<title>alloc_node (1,000 bytes, 1000 B, 16.59%)</title>"));
    assert_non_null(strstr(svg, "data-n=\"" EVIL_XML "\""));
    assert_non_null(strstr(svg, "<title>" EVIL_XML " (5,000 bytes"));
    assert_non_null(strstr(svg, "cmd " EVIL_XML "</text>"));
    assert_null(strstr(svg, "<img"));
    /* Only the script may contain "<" unescaped, and it sits in CDATA. */
    assert_non_null(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
    free(svg);

    /* By allocations; inverted graphs say so. */
    o.cost = ANA_FLAME_ALLOCATIONS;
    o.inverted = 1;
    assert_int_equal(ana_flame_write_svg(&t, name_of, NULL, mem_open(&m), &o), 0);
    svg = mem_close(&m);
    assert_non_null(strstr(svg, "<title>Inverted flame graph: allocations</title>"));
    assert_non_null(strstr(svg, "<title>parse (11 allocations, 61.11%)</title>"));
    free(svg);
    ana_tree_release(&t);
}

static void test_cost_names(void **state)
{
    enum ana_flame_cost c;

    (void)state;
    assert_int_equal(ana_flame_cost_parse("temporary", &c), 0);
    assert_int_equal(c, ANA_FLAME_TEMPORARY);
    assert_int_equal(ana_flame_cost_parse("peak", &c), 0);
    assert_int_equal(c, ANA_FLAME_PEAK);
    assert_int_equal(ana_flame_cost_parse("Bytes", &c), -EINVAL);
    assert_string_equal(ana_flame_cost_name(ANA_FLAME_LEAKED), "leaked");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_markup),
        cmocka_unit_test(test_escape_bytes),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_ticks_linear),
        cmocka_unit_test(test_ticks_log),
        cmocka_unit_test(test_timeline_svg),
        cmocka_unit_test(test_histogram_svg),
        cmocka_unit_test(test_flame_folded),
        cmocka_unit_test(test_flame_sorted_by_name),
        cmocka_unit_test(test_flame_svg),
        cmocka_unit_test(test_cost_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
