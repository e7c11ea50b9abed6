/* SPDX-License-Identifier: MIT */
/* Suppression rules (ana_supp.h): LeakSanitizer's pattern match, the
 * files' syntax and the refusals of what is not a file of rules. The
 * match against a trace's stacks is the e2e tests' (ana_demo, check_gate). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/core/ana_supp.h"

static void test_lsan_match(void **state)
{
    static const struct {
        const char *pattern, *name;
        bool want;
    } cases[] = {
        /* a substring anywhere, pieces in order, anchors */
        {"make_lost", "make_lost_twice", true},
        {"lost", "make_lost", true},
        {"make*twice", "make_lost_twice", true},
        {"twice*make", "make_lost_twice", false},
        {"^make", "make_lost", true},
        {"^lost", "make_lost", false},
        {"lost$", "make_lost", true},
        {"make$", "make_lost", false},
        {"^make_lost$", "make_lost", true},
        {"^make*$", "make_lost", true},
        {"libfoo.so", "/usr/lib/libfoo.so.1", true},
        /* an empty or unknown name never matches */
        {"*", "", false},
        {"*", NULL, false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (ana_supp_lsan_match(cases[i].pattern, cases[i].name) != cases[i].want)
            fail_msg("'%s' against '%s': not %d", cases[i].pattern,
                     cases[i].name ? cases[i].name : "(null)", cases[i].want);
}

/* A file of text in a fresh folder; its path in path. */
static void write_file(char *path, size_t size, const char *text, size_t len)
{
    snprintf(path, size, "/tmp/test_ana_supp.XXXXXX");
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static void test_load(void **state)
{
    static const char text[] = "# the runtime's\n"
                               "leak:*pool::pool()*\r\n"
                               "   \n"
                               "  leak:_IO_file_doallocate (*  \n";
    struct ana_supp s = {0};
    char path[64], err[256] = "";

    (void)state;
    write_file(path, sizeof(path), text, sizeof(text) - 1);
    assert_int_equal(ana_supp_load_file(&s, path, false, err, sizeof(err)), 0);
    assert_int_equal(s.nr_rules, 2);
    assert_string_equal(s.rules[0], "*pool::pool()*");
    assert_string_equal(s.rules[1], "_IO_file_doallocate (*");
    assert_int_equal(ana_supp_load_file(&s, path, true, err, sizeof(err)), 0);
    assert_int_equal(s.nr_lsan_rules, 2);
    assert_int_equal(s.nr_rules, 2);
    assert_int_equal(ana_supp_add_defaults(&s), 0);
    assert_true(s.nr_rules > 2);
    unlink(path);
    ana_supp_release(&s);
    assert_int_equal(s.nr_rules, 0);
    assert_null(s.rules);
}

static void test_refused(void **state)
{
    static const char bad[] = "leak:ok\nfree:nope\n";
    static const char nul[] = "leak:a\0b\n";
    struct ana_supp s = {0};
    char path[64], err[256];

    (void)state;
    write_file(path, sizeof(path), bad, sizeof(bad) - 1);
    assert_int_equal(ana_supp_load_file(&s, path, false, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, ":2: a rule is 'leak:PATTERN'"));
    assert_non_null(strstr(err, "not 'free:nope'"));
    unlink(path);
    write_file(path, sizeof(path), nul, sizeof(nul) - 1);
    assert_int_equal(ana_supp_load_file(&s, path, false, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "a NUL byte in it"));
    unlink(path);
    assert_int_equal(ana_supp_load_file(&s, "/tmp", false, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "/tmp: cannot read the suppressions: not a regular file");
    assert_int_equal(ana_supp_load_file(&s, "/nonexistent/supp", false, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "No such file or directory"));
    ana_supp_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lsan_match),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
