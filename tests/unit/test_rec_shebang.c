/* SPDX-License-Identifier: MIT */
/* The one "#!" resolver: the checks before recording and the choice of
 * collector follow a script to the same program, through /usr/bin/env too,
 * so an env script running a 32-bit program gets the i386 collector.
 * PROG32 and PROG64 are test programs of each ELF class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "recorder/rec_class.h"
#include "recorder/rec_internal.h"
#include "recorder/rec_shebang.h"

static char dir[] = "/tmp/ms-shebang-XXXXXX";
static char collector[256], collector32[256];

/* Writes an executable script dir/name with the given text. */
static const char *script(const char *name, const char *text)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
    return path;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fclose(f);
}

static int setup(void **state)
{
    char i386[300], path[1024], prog_dir[512];
    const char *slash;

    if (!mkdtemp(dir))
        return -1;
    snprintf(collector, sizeof(collector), "%s/libmemscribe.so", dir);
    snprintf(i386, sizeof(i386), "%s/i386", dir);
    snprintf(collector32, sizeof(collector32), "%s/i386/libmemscribe.so", dir);
    if (mkdir(i386, 0755) != 0)
        return -1;
    touch(collector);
    touch(collector32);
    /* PATH: the test programs' folder only, so env finds them by name. */
    slash = strrchr(PROG32, '/');
    snprintf(prog_dir, sizeof(prog_dir), "%.*s", (int)(slash - PROG32), PROG32);
    snprintf(path, sizeof(path), "%s", prog_dir);
    return setenv("PATH", path, 1);
}

static int teardown(void **state)
{
    char cmd[512];

    /* By its path: setup left PATH the test programs' folder only. */
    snprintf(cmd, sizeof(cmd), "/bin/rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The collector rec_collector_for picks for prog, compared with want. */
static void assert_collector(const char *prog, const char *want)
{
    char *got = rec_collector_for(strdup(collector), prog);

    assert_string_equal(got, want);
    free(got);
}

static const char *base(const char *path)
{
    return strrchr(path, '/') + 1;
}

static void test_env_script_32(void **state)
{
    char text[256];

    snprintf(text, sizeof(text), "#!/usr/bin/env %s\n", base(PROG32));
    assert_collector(script("env32", text), collector32);
}

static void test_direct_script_32(void **state)
{
    char text[600];

    snprintf(text, sizeof(text), "#! %s -x\necho unused\n", PROG32);
    assert_collector(script("direct32", text), collector32);
}

static void test_programs(void **state)
{
    char text[256];

    assert_collector(PROG32, collector32);
    assert_collector(PROG64, collector);
    snprintf(text, sizeof(text), "#!/usr/bin/env %s\n", base(PROG64));
    assert_collector(script("env64", text), collector);
    /* A script running a script running the 32-bit program. */
    snprintf(text, sizeof(text), "#!%s/env32\n", dir);
    assert_collector(script("nested", text), collector32);
}

static void test_next(void **state)
{
    char next[512], want[600];

    assert_int_equal(rec_shebang_next(PROG64, next, sizeof(next)), 0);
    assert_int_equal(rec_shebang_next("/nonexistent/prog", next, sizeof(next)), 0);
    assert_int_equal(rec_shebang_next(script("plain", "echo hi\n"), next, sizeof(next)), 0);
    assert_int_equal(rec_shebang_next(script("empty", "#!  \nx\n"), next, sizeof(next)), -1);
    /* env's options leave env itself; so does a program not on PATH. */
    assert_int_equal(rec_shebang_next(script("opt", "#!/usr/bin/env -S a b\n"), next, sizeof(next)),
                     1);
    assert_string_equal(next, "/usr/bin/env");
    assert_int_equal(
        rec_shebang_next(script("missing", "#!/usr/bin/env ms-no-such-prog\n"), next, sizeof(next)),
        1);
    assert_string_equal(next, "/usr/bin/env");
    /* The word after env is on the "#!" line, never on the next line. */
    assert_int_equal(rec_shebang_next(script("bare", "#!/usr/bin/env\nvm\n"), next, sizeof(next)),
                     1);
    assert_string_equal(next, "/usr/bin/env");
    snprintf(want, sizeof(want), "#!/usr/bin/env %s\n", base(PROG32));
    assert_int_equal(rec_shebang_next(script("env32b", want), next, sizeof(next)), 1);
    assert_string_equal(next, PROG32);
    assert_int_equal(rec_shebang_next(script("env32c", want), next, 8), -2);
}

static void test_check_follows_env(void **state)
{
    char msg[512], text[256];

    snprintf(text, sizeof(text), "#!/usr/bin/env %s\n", base(PROG32));
    assert_int_equal(rec_check_program(script("check32", text), msg, sizeof(msg)), 0);
    assert_int_equal(rec_check_program(script("checkempty", "#!\n"), msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "empty \"#!\" line"));
}

/* Links in the test's collector dir by every name of rec_platform_names but
 * skip, made or removed. All to "." (what rec_collector_for checks is that a
 * collector is there by each name; which one is the build's business). */
static void platform_links(const char *skip, int make)
{
    char names[256], link[600];

    snprintf(names, sizeof(names), "%s", rec_platform_names());
    for (char *save, *name = strtok_r(names, ":", &save); name; name = strtok_r(NULL, ":", &save)) {
        if (skip && !strcmp(name, skip))
            continue;
        snprintf(link, sizeof(link), "%s/%s", dir, name);
        if (make)
            assert_int_equal(symlink(".", link), 0);
        else
            assert_int_equal(unlink(link), 0);
    }
}

/* $PLATFORM only when a collector is there by every name ld.so may give it:
 * with haswell missing (an install from before Intel's names were known),
 * ld.so on an AVX2 Intel CPU would find no collector and record nothing, so
 * each program gets its own class's path instead. */
static void test_platform_dirs(void **state)
{
    char want[600];

    assert_non_null(strstr(rec_platform_names(), "haswell"));
    assert_non_null(strstr(rec_platform_names(), "i686"));
    platform_links("haswell", 1);
    assert_collector(PROG64, collector);
    assert_collector(PROG32, collector32);
    platform_links("haswell", 0);
    platform_links(NULL, 1);
    snprintf(want, sizeof(want), "%s/$PLATFORM/libmemscribe.so", dir);
    assert_collector(PROG64, want);
    assert_collector(PROG32, want);
    platform_links(NULL, 0);
}

/* The build tree holds a collector by every name (src/collector's links), so
 * record names $PLATFORM there. */
static void test_build_tree(void **state)
{
    char *got = rec_collector_for(strdup(COLLECTOR_DIR "/libmemscribe.so"), PROG64);

    assert_string_equal(got, COLLECTOR_DIR "/$PLATFORM/libmemscribe.so");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_script_32),     cmocka_unit_test(test_direct_script_32),
        cmocka_unit_test(test_programs),          cmocka_unit_test(test_next),
        cmocka_unit_test(test_check_follows_env), cmocka_unit_test(test_platform_dirs),
        cmocka_unit_test(test_build_tree),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
