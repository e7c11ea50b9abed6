/* SPDX-License-Identifier: MIT */
/* argv shortened in the middle (ana_argv.h): the program and the files
 * stay, options go from the middle out, runs become "...". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/core/ana_argv.h"

/* words: separated by '|' here, NUL-separated as recorded */
static void check(const char *words, size_t width, const char *want)
{
    char argv[512], out[512];
    size_t n = strlen(words);

    memcpy(argv, words, n + 1);
    for (size_t i = 0; i < n; i++)
        if (argv[i] == '|')
            argv[i] = '\0';
    size_t len = ana_argv_short(out, sizeof(out), argv, n + 1, width);
    assert_string_equal(out, want);
    assert_int_equal(len, strlen(want));
}

static void test_fits(void **state)
{
    (void)state;
    check("cc|-c|a.c", 60, "cc -c a.c");
    check("ls", 60, "ls");
}

static void test_middle(void **state)
{
    (void)state;
    /* 88 characters: options go from the middle out until 60 fit */
    check("cc|-O2|-g|-I.|-Iinclude|-DPROJECT_VERSION=1|-Wall|-Wextra|-Wshadow|-c|src/parse.c|-o|"
          "build/parse.o",
          60, "cc -O2 -g -I. -Iinclude ... -c src/parse.c -o build/parse.o");
    /* narrower: every option, then the -c and -o before files */
    check("cc|-O2|-g|-I.|-Iinclude|-DPROJECT_VERSION=1|-Wall|-Wextra|-Wshadow|-c|src/parse.c|-o|"
          "build/parse.o",
          40, "cc ... -c src/parse.c -o build/parse.o");
    check("cc|-O2|-g|-I.|-Iinclude|-DPROJECT_VERSION=1|-Wall|-Wextra|-Wshadow|-c|src/parse.c|-o|"
          "build/parse.o",
          36, "cc ... src/parse.c -o build/parse.o");
    check("cc|-O2|-g|-I.|-Iinclude|-DPROJECT_VERSION=1|-Wall|-Wextra|-Wshadow|-c|src/parse.c|-o|"
          "build/parse.o",
          30, "cc ... parse.c ... parse.o");
    /* files to their last part, and at last the end cut at 2 x width */
    check("cc|-c|/very/long/path/to/the/sources/parse.c|-o|/very/long/path/to/the/build/parse.o",
          20, "cc ... parse.c ... parse.o");
    check("prog|aaaaaaaaaa.c|bbbbbbbbbb.c|cccccccccc.c|dddddddddd.c", 10, "prog aaaaaaaaaa.c ...");
}

static void test_files(void **state)
{
    (void)state;
    /* a version number is no file; a path is */
    check("tool|--ratio|1.5|--level|3|--mode|fast|--out|x/y|--verbose|--more|--and-more", 30,
          "tool --ratio ... x/y ...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_middle),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
