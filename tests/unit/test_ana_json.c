/* SPDX-License-Identifier: MIT */
/* The JSON writer (exact integers, escaping, commas, errors), result
 * tables in text/CSV/JSON, and time parsing and formatting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/core/ana_json.h"
#include "analysis/core/ana_table.h"
#include "analysis/core/ana_text.h"
#include "analysis/core/ana_time.h"

/* Run fn writing into a memory stream; returns the text (malloc'd). */
static char *capture(void (*fn)(FILE *f, void *arg), void *arg)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);

    assert_non_null(f);
    fn(f, arg);
    assert_int_equal(fclose(f), 0);
    return s;
}

static void json_doc(FILE *f, void *arg)
{
    struct ana_json j;

    ana_json_init(&j, f, false);
    ana_json_begin_object(&j);
    ana_json_kv_u64(&j, "big", (1ull << 53) + 1);
    ana_json_kv_u64(&j, "max", UINT64_MAX);
    ana_json_kv_i64(&j, "min", INT64_MIN);
    ana_json_kv_str(&j, "s", "a\"b\\c\n\t\x01\x7f\xc3\xa9");
    ana_json_key(&j, "list");
    ana_json_begin_array(&j);
    ana_json_u64(&j, 1);
    ana_json_begin_object(&j);
    ana_json_end_object(&j);
    ana_json_begin_array(&j);
    ana_json_end_array(&j);
    ana_json_null(&j);
    ana_json_bool(&j, false);
    ana_json_str(&j, NULL);
    ana_json_end_array(&j);
    ana_json_end_object(&j);
    *(int *)arg = ana_json_finish(&j);
}

static void test_json_exact(void **state)
{
    int rc = -1;
    char *s = capture(json_doc, &rc);
    (void)state;

    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\"big\":9007199254740993,\"max\":18446744073709551615,"
                           "\"min\":-9223372036854775808,"
                           "\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\xc3\xa9\","
                           "\"list\":[1,{},[],null,false,null]}\n");
    free(s);
}

static void json_unbalanced(FILE *f, void *arg)
{
    struct ana_json j;

    ana_json_init(&j, f, true);
    ana_json_begin_object(&j);
    ana_json_key(&j, "x");
    *(int *)arg = ana_json_finish(&j);
}

static void json_pretty(FILE *f, void *arg)
{
    struct ana_json j;

    ana_json_init(&j, f, true);
    ana_json_begin_object(&j);
    ana_json_kv_u64(&j, "a", 1);
    ana_json_key(&j, "b");
    ana_json_begin_array(&j);
    ana_json_u64(&j, 2);
    ana_json_end_array(&j);
    ana_json_end_object(&j);
    *(int *)arg = ana_json_finish(&j);
}

static void test_json_errors_and_pretty(void **state)
{
    int rc = 0;
    char *s = capture(json_unbalanced, &rc);
    (void)state;

    assert_int_equal(rc, -EINVAL);
    free(s);
    s = capture(json_pretty, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n");
    free(s);
}

static const struct ana_column cols[] = {
    {"name", "name", ANA_CELL_STR},
    {"n", "count", ANA_CELL_U64},
    {"delta", "delta", ANA_CELL_I64},
    {"stack", "stack", ANA_CELL_LIST},
};

static struct ana_table *sample_table(void)
{
    struct ana_table *t;
    const char *fr[] = {"f(int, char)", "main"};

    assert_int_equal(ana_table_create(&t, cols, 4), 0);
    assert_int_equal(ana_table_add_row(t), 0);
    ana_table_set_str(t, 0, "a,b");
    ana_table_set_u64(t, 1, 12345);
    ana_table_set_i64(t, 2, -5);
    ana_table_set_list(t, 3, fr, 2);
    assert_int_equal(ana_table_add_row(t), 0);
    ana_table_set_str(t, 0, "q\"x");
    ana_table_set_u64(t, 1, 7);
    ana_table_set_i64(t, 2, 0);
    ana_table_set_list(t, 3, fr + 1, 1);
    return t;
}

static void table_text(FILE *f, void *arg)
{
    assert_int_equal(ana_table_write_text(arg, f, "> ", " < "), 0);
}
static void table_csv(FILE *f, void *arg)
{
    assert_int_equal(ana_table_write_csv(arg, f, true), 0);
}
static void table_json(FILE *f, void *arg)
{
    struct ana_json j;

    ana_json_init(&j, f, false);
    ana_table_write_json(arg, &j);
    assert_int_equal(ana_json_finish(&j), 0);
}

/* A sampled trace's table: estimates with standard errors (ana_table_set_se). */
static const struct ana_column est_cols[] = {
    {"bytes", "bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"blocks", "blocks", ANA_CELL_I64 | ANA_CELL_EST},
    {"temp", "temporary", ANA_CELL_U64 | ANA_CELL_EST},
};

static void table_marked(FILE *f, void *arg)
{
    assert_int_equal(ana_table_write_text_marked(arg, f, "", " < ", "~"), 0);
}

/* Text says the error relative to its estimate (none after a 0 or an
 * error of 0); JSON and CSV give it whole, in a column of its own for
 * each column that has one, null or empty where a row has none. */
static void test_table_se(void **state)
{
    struct ana_table *t;
    char *s;

    (void)state;
    assert_int_equal(ana_table_create(&t, est_cols, 3), 0);
    assert_int_equal(ana_table_add_row(t), 0);
    ana_table_set_u64(t, 0, 1000);
    assert_int_equal(ana_table_set_se(t, 0, 12.4), 0);
    ana_table_set_i64(t, 1, -40);
    assert_int_equal(ana_table_set_se(t, 1, 20.0), 0);
    ana_table_set_u64(t, 2, 3);
    assert_int_equal(ana_table_add_row(t), 0);
    ana_table_set_u64(t, 0, 0);
    assert_int_equal(ana_table_set_se(t, 0, 65536.0), 0);
    ana_table_set_i64(t, 1, 9);
    assert_int_equal(ana_table_set_se(t, 1, 0.2), 0);
    ana_table_set_none(t, 2);
    /* a column that is no estimate takes none */
    assert_int_equal(ana_table_set_se(t, 3, 1.0), -EINVAL);

    s = capture(table_marked, t);
    assert_string_equal(s, "     bytes    blocks  temp\n"
                           "~1000±1.2%  ~-40±50%    ~3\n"
                           "        ~0        ~9      \n");
    free(s);
    s = capture(table_csv, t);
    assert_string_equal(s, "bytes,bytes_se,blocks,blocks_se,temporary\n"
                           "1000,12,-40,20,3\n"
                           "0,65536,9,0,\n");
    free(s);
    s = capture(table_json, t);
    assert_string_equal(s, "[{\"bytes\":1000,\"bytes_se\":12,\"blocks\":-40,\"blocks_se\":20,"
                           "\"temporary\":3},{\"bytes\":0,\"bytes_se\":65536,\"blocks\":9,"
                           "\"blocks_se\":0,\"temporary\":null}]\n");
    free(s);
    ana_table_destroy(t);
}

static void json_bytes(FILE *f, void *arg)
{
    struct ana_json j;

    (void)arg;
    ana_json_init(&j, f, false);
    /* ESC, a C1 control (U+009B, CSI), a byte that is not UTF-8, é, a cut sequence */
    ana_json_strn(&j, "a\033[2J\xc2\x9b\xff\xc3\xa9\xe2\x82", 12);
    assert_int_equal(ana_json_finish(&j), 0);
}

static void json_deep(FILE *f, void *arg)
{
    struct ana_json j;
    int levels = *(int *)arg;

    ana_json_init(&j, f, false);
    for (int i = 0; i < levels; i++) {
        ana_json_begin_array(&j);
        ana_json_u64(&j, (uint64_t)i);
    }
    for (int i = 0; i < levels; i++)
        ana_json_end_array(&j);
    *(int *)arg = ana_json_finish(&j);
}

/* Program bytes: JSON stays valid UTF-8, text has no control characters. */
static void test_json_text_bytes(void **state)
{
    char *s = capture(json_bytes, NULL);
    char buf[64];

    (void)state;
    assert_string_equal(s, "\"a\\u001b[2J\\u009b\\\\xff\xc3\xa9\\\\xe2\\\\x82\"\n");
    free(s);
    assert_int_equal(ana_text_escape(buf, sizeof(buf), "a\033[2J\xc2\x9b\xff\xc3\xa9\x7f", 11),
                     1 + 4 + 3 + 8 + 4 + 2 + 4);
    assert_string_equal(buf, "a\\x1b[2J\\xc2\\x9b\\xff\xc3\xa9\\x7f");
    /* Cut to fit: whole pieces only, never half a character or escape. */
    assert_int_equal(ana_text_escape(buf, 6, "ab\033cd", 5), 8);
    assert_string_equal(buf, "ab");
    assert_int_equal(ana_text_escape(buf, 5, "\xc3\xa9\xc3\xa9\xc3\xa9", 6), 6);
    assert_string_equal(buf, "\xc3\xa9\xc3\xa9");
}

struct pieces {
    char text[128];
    size_t len;
    unsigned nr;
};

static void put_piece(void *arg, const char *s, size_t len)
{
    struct pieces *p = arg;

    assert_true(len > 0 && p->len + len < sizeof(p->text));
    memcpy(p->text + p->len, s, len);
    p->len += len;
    p->nr++;
}

/* The one escaper (ana_json_escape) writes what ana_json_str() writes
 * between the quotes, plain runs as one piece each: the DHAT export uses
 * it for its strings. */
static void test_json_escape(void **state)
{
    static const char in[] = "fn\"x\n\t\r\x01\x7f\xc2\x9b\xc3\xa9\xff end";
    struct pieces p = {0};

    (void)state;
    ana_json_escape(in, sizeof(in) - 1, put_piece, &p);
    p.text[p.len] = 0;
    assert_string_equal(p.text, "fn\\\"x\\n\\t\\r\\u0001\\u007f\\u009b\xc3\xa9\\\\xff end");
    /* Four plain runs ("fn", "x", the e acute, " end") and 8 escapes. */
    assert_int_equal(p.nr, 4 + 8);
    p = (struct pieces){0};
    ana_json_escape("plain", 5, put_piece, &p);
    assert_int_equal(p.nr, 1);
    ana_json_escape("", 0, put_piece, &p);
    assert_int_equal(p.nr, 1);
}

/* Nesting as deep as a call tree of 256 frames needs (2 levels each). */
static void test_json_deep(void **state)
{
    int levels = 600;
    char *s = capture(json_deep, &levels);

    (void)state;
    assert_int_equal(levels, 0);
    assert_int_equal(strncmp(s, "[0,[1,[2,", 9), 0);
    assert_non_null(strstr(s, "[599]]]"));
    free(s);
    levels = ANA_JSON_MAX_DEPTH + 1;
    s = capture(json_deep, &levels);
    assert_int_equal(levels, -EINVAL);
    free(s);
}

static void test_table(void **state)
{
    struct ana_table *t = sample_table();
    (void)state;

    char *s = capture(table_text, t);
    assert_string_equal(s, "> name      n  delta  stack\n"
                           "> a,b   12345     -5  f(int, char) < main\n"
                           "> q\"x       7      0  main\n");
    free(s);
    s = capture(table_csv, t);
    assert_string_equal(s, "name,count,delta,stack\n"
                           "\"a,b\",12345,-5,\"f(int, char);main\"\n"
                           "\"q\"\"x\",7,0,main\n");
    free(s);
    s = capture(table_json, t);
    assert_string_equal(s, "[{\"name\":\"a,b\",\"count\":12345,\"delta\":-5,"
                           "\"stack\":[\"f(int, char)\",\"main\"]},"
                           "{\"name\":\"q\\\"x\",\"count\":7,\"delta\":0,\"stack\":[\"main\"]}]\n");
    free(s);
    ana_table_destroy(t);
}

static void test_time_parse(void **state)
{
    struct ana_time_point p;
    char buf[64];
    (void)state;

    assert_int_equal(ana_time_parse_point("peak-50ms", &p), 0);
    assert_int_equal(p.base, ANA_TIME_PEAK);
    assert_int_equal(p.offset_ns, -50000000);
    assert_int_equal(ana_time_resolve(&p, 1000000000, 2000000000), 950000000);
    assert_int_equal(ana_time_resolve(&p, 10, 2000000000), 0); /* clamped */
    assert_int_equal(ana_time_parse_point("end", &p), 0);
    assert_int_equal(ana_time_resolve(&p, 5, 77), 77);
    assert_int_equal(ana_time_parse_point("start+1s", &p), 0);
    assert_int_equal(ana_time_resolve(&p, 5, 3000000000ull), 1000000000);
    assert_int_equal(ana_time_resolve(&p, 5, 10), 10); /* clamped to the end */
    assert_int_equal(ana_time_parse_point("1.5s", &p), 0);
    assert_int_equal(p.base, ANA_TIME_ABS);
    assert_int_equal(p.offset_ns, 1500000000);
    assert_int_equal(ana_time_parse_point("peaks", &p), -EINVAL);
    assert_int_equal(ana_time_parse_point("end+", &p), -EINVAL);

    assert_string_equal(ana_time_format(1503200999, buf, sizeof(buf)), "1.503200s");
    assert_string_equal(ana_bytes_format(512, buf, sizeof(buf)), "512 B");
    assert_string_equal(ana_bytes_format(10000000, buf, sizeof(buf)), "9.53 MiB");
    assert_string_equal(ana_bytes_format(1536, buf, sizeof(buf)), "1.50 KiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_exact),      cmocka_unit_test(test_json_errors_and_pretty),
        cmocka_unit_test(test_json_text_bytes), cmocka_unit_test(test_json_escape),
        cmocka_unit_test(test_json_deep),       cmocka_unit_test(test_table),
        cmocka_unit_test(test_table_se),        cmocka_unit_test(test_time_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
