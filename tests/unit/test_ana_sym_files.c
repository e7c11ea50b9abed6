/* SPDX-License-Identifier: MIT */
/* Finding a module's files: moved binaries found through --debug-dir (by
 * name and by build id) and --sysroot, separate debug files through
 * .gnu_debuglink (build id or CRC), and the failures: a missing file, a
 * changed one (build id differs), one that is not ELF. Failures give a note
 * and module+offset frames, never a wrong name; debuginfod is asked only
 * when DEBUGINFOD_URLS is set. */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/sym/ana_symbolize.h"
#include "sym_cases.h"
#include "test_ana_sym_fixture.h"

static struct symfix fx;
static char dir[512]; /* scratch directory of this run */

static int group_setup(void **state)
{
    if (symfix_run(&fx))
        return -1;
    snprintf(dir, sizeof(dir), "%s/files", fx.tmpdir);
    return symfix_sh("mkdir -p %s", dir);
}

static int group_teardown(void **state)
{
    symfix_free(&fx);
    return 0;
}

#define MAX_LINES 96

struct text {
    char lines[MAX_LINES][512];
    uint32_t nr;
};

/* Symbolize the static case with the sym_chain module recorded as *exe
 * (other modules as captured) and format every line. */
static struct ana_sym *symbolize(const struct ana_sym_options *o, const struct fmt_module *exe,
                                 struct text *out)
{
    const struct fmt_module *orig = symfix_module(&fx, "sym_chain");
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_STATIC);
    struct ana_sym_stack st = {0};
    struct ana_sym *s;

    assert_int_equal(ana_sym_create(&s, o), 0);
    for (size_t i = 0; i < fx.nr_modules; i++)
        assert_int_equal(ana_sym_add_module(s, 0, &fx.modules[i] == orig ? exe : &fx.modules[i]),
                         0);
    assert_int_equal(ana_sym_stack(s, 0, rec->addrs, rec->nr, &st), 0);
    assert_true(st.nr_lines <= MAX_LINES);
    out->nr = st.nr_lines;
    for (uint32_t i = 0; i < st.nr_lines; i++) {
        ana_sym_format_line(&st.lines[i], out->lines[i], sizeof(out->lines[i]));
        print_message("    %s\n", out->lines[i]);
    }
    ana_sym_stack_release(&st);
    return s;
}

static void assert_same_text(const struct text *a, const struct text *b)
{
    assert_int_equal(a->nr, b->nr);
    for (uint32_t i = 0; i < a->nr; i++)
        assert_string_equal(a->lines[i], b->lines[i]);
}

/* A module recorded at `path`, otherwise as sym_chain was captured. */
static struct fmt_module exe_at(const char *path)
{
    struct fmt_module m = *symfix_module(&fx, "sym_chain");

    m.path = path;
    m.path_len = (uint32_t)strlen(path);
    return m;
}

/* The reference: sym_chain found where it was recorded. */
static void reference(struct text *ref)
{
    struct ana_sym_options o = {0};
    struct ana_sym *s = symbolize(&o, symfix_module(&fx, "sym_chain"), ref);

    assert_int_equal(ana_sym_nr_notes(s), 0);
    assert_non_null(strstr(ref->lines[0], "sym_chain!static_leaf(unsigned long)+0x"));
    ana_sym_destroy(s);
}

static void assert_unresolved(const struct text *t, const char *module)
{
    char prefix[128];

    /* The stack's own frames show as module+offset, nothing else. */
    snprintf(prefix, sizeof(prefix), " %s+0x", module);
    assert_non_null(strstr(t->lines[0], prefix));
    assert_null(strchr(t->lines[0], '!'));
    assert_null(strchr(t->lines[0], '('));
}

static void test_moved_found_by_debug_dir_name(void **state)
{
    struct text ref, got;
    const char *dirs[1];
    char dd[600];

    reference(&ref);
    snprintf(dd, sizeof(dd), "%s/flat", dir);
    assert_int_equal(symfix_sh("mkdir -p %s && cp %s %s/", dd, symfix_program("sym_chain"), dd), 0);
    struct fmt_module m = exe_at("/nonexistent/elsewhere/sym_chain");

    /* Without the directory: a note, and module+offset. */
    struct ana_sym_options o = {0};
    struct ana_sym *s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 1);
    print_message("  note: %s\n", ana_sym_note(s, 0));
    assert_string_equal(
        ana_sym_note(s, 0),
        "/nonexistent/elsewhere/sym_chain: No such file or directory; frames show module+offset");
    assert_unresolved(&got, "sym_chain");
    ana_sym_destroy(s);

    dirs[0] = dd;
    o.debug_dirs = dirs;
    o.nr_debug_dirs = 1;
    s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 0);
    assert_same_text(&ref, &got);
    ana_sym_destroy(s);
}

static void test_moved_found_by_build_id(void **state)
{
    const struct fmt_module *orig = symfix_module(&fx, "sym_chain");
    struct text ref, got;
    char dd[600], sub[8];
    char rest[2 * FMT_MAX_BUILD_ID + 1] = "";
    const char *dirs[1] = {dd};

    reference(&ref);
    snprintf(dd, sizeof(dd), "%s/bid", dir);
    snprintf(sub, sizeof(sub), "%02x", orig->build_id[0]);
    for (uint32_t i = 1; i < orig->build_id_len; i++)
        snprintf(rest + 2 * (i - 1), 3, "%02x", orig->build_id[i]);
    assert_int_equal(symfix_sh("mkdir -p %s/.build-id/%s && cp %s %s/.build-id/%s/%s.debug", dd,
                               sub, symfix_program("sym_chain"), dd, sub, rest),
                     0);
    struct fmt_module m = exe_at("/nonexistent/elsewhere/sym_chain");
    struct ana_sym_options o = {.debug_dirs = dirs, .nr_debug_dirs = 1};
    struct ana_sym *s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 0);
    assert_same_text(&ref, &got);
    ana_sym_destroy(s);
}

static void test_sysroot(void **state)
{
    struct text ref, got;
    char root[600];

    reference(&ref);
    snprintf(root, sizeof(root), "%s/root", dir);
    assert_int_equal(symfix_sh("mkdir -p %s/opt/sym && cp %s %s/opt/sym/", root,
                               symfix_program("sym_chain"), root),
                     0);
    /* Recorded at a path this machine does not have; the sysroot has it.
     * libc is not under the sysroot: its build id finds the host's debug
     * file, or it shows as module+offset, but never breaks the stack. */
    struct fmt_module m = exe_at("/opt/sym/sym_chain");
    struct ana_sym_options o = {.sysroot = root};
    struct ana_sym *s = symbolize(&o, &m, &got);
    uint32_t i = 0;
    for (; i < ref.nr && !strstr(ref.lines[i], "!main+"); i++)
        assert_string_equal(ref.lines[i], got.lines[i]);
    assert_string_equal(ref.lines[i], got.lines[i]);
    ana_sym_destroy(s);

    /* The same path without the sysroot is not found. */
    struct ana_sym_options none = {0};
    s = symbolize(&none, &m, &got);
    assert_unresolved(&got, "sym_chain");
    ana_sym_destroy(s);
}

static void test_debuglink(void **state)
{
    const struct fmt_module *orig = symfix_module(&fx, "sym_chain");
    struct text ref, got;
    char ld[600], path[700];

    reference(&ref);
    snprintf(ld, sizeof(ld), "%s/link", dir);
    assert_int_equal(symfix_sh("set -e; mkdir -p %s/.debug; cd %s; cp %s sym_chain;"
                               "objcopy --only-keep-debug sym_chain .debug/sym_chain.debug;"
                               "strip --strip-debug sym_chain;"
                               "objcopy --add-gnu-debuglink=.debug/sym_chain.debug sym_chain",
                               ld, ld, symfix_program("sym_chain")),
                     0);
    snprintf(path, sizeof(path), "%s/sym_chain", ld);
    struct fmt_module m = exe_at(path);
    struct ana_sym_options o = {0};

    /* Verified by build id. */
    struct ana_sym *s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 0);
    assert_same_text(&ref, &got);
    ana_sym_destroy(s);

    /* No build id recorded: verified by the link's CRC. */
    m.build_id_len = 0;
    s = symbolize(&o, &m, &got);
    assert_same_text(&ref, &got);
    ana_sym_destroy(s);

    /* A debug file that changed (CRC differs) is not used: symbols of the
     * stripped binary only, no source lines. */
    assert_int_equal(symfix_sh("printf x >> %s/.debug/sym_chain.debug", ld), 0);
    s = symbolize(&o, &m, &got);
    assert_non_null(strstr(got.lines[0], "sym_chain!static_leaf(unsigned long)+0x"));
    assert_null(strchr(strchr(got.lines[0], ')') + 1, '('));
    ana_sym_destroy(s);
    (void)orig;
}

static void test_changed_binary(void **state)
{
    struct text got;
    char note[1024];

    /* Recorded as sym_chain, but the file at that path is now another
     * binary: it must not lend its names to sym_chain's addresses. */
    const char *plugin = symfix_program("libsym_plugin.so");
    struct fmt_module m = exe_at(plugin);
    struct ana_sym_options o = {0};
    struct ana_sym *s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 1);
    snprintf(note, sizeof(note),
             "%s: build id differs from the recorded one (changed since recording?); not used, "
             "frames show "
             "module+offset",
             plugin);
    assert_string_equal(ana_sym_note(s, 0), note);
    assert_unresolved(&got, "libsym_plugin.so");
    ana_sym_destroy(s);

    /* With the right file in --debug-dir, that one is used, and said so. */
    char dd[600];
    const char *dirs[1] = {dd};
    snprintf(dd, sizeof(dd), "%s/changed", dir);
    assert_int_equal(
        symfix_sh("mkdir -p %s && cp %s %s/libsym_plugin.so", dd, symfix_program("sym_chain"), dd),
        0);
    o.debug_dirs = dirs;
    o.nr_debug_dirs = 1;
    s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 1);
    assert_non_null(strstr(ana_sym_note(s, 0), "build id differs"));
    assert_non_null(strstr(ana_sym_note(s, 0), "; using "));
    assert_non_null(strstr(got.lines[0], "libsym_plugin.so!static_leaf(unsigned long)+0x"));
    ana_sym_destroy(s);
}

static void test_not_elf(void **state)
{
    struct text got;
    char path[700], note[1024];

    snprintf(path, sizeof(path), "%s/not_elf", dir);
    assert_int_equal(symfix_sh("echo 'not an ELF file' > %s", path), 0);
    struct fmt_module m = exe_at(path);
    m.build_id_len = 0;
    struct ana_sym_options o = {0};
    struct ana_sym *s = symbolize(&o, &m, &got);
    assert_int_equal(ana_sym_nr_notes(s), 1);
    snprintf(note, sizeof(note), "%s: Exec format error; frames show module+offset", path);
    assert_string_equal(ana_sym_note(s, 0), note);
    assert_unresolved(&got, "not_elf");
    ana_sym_destroy(s);
}

static void test_debuginfod_only_when_configured(void **state)
{
    struct text got;
    struct ana_sym_stats stats;
    char cache[600];

    struct fmt_module m = exe_at("/nonexistent/elsewhere/sym_chain");
    struct ana_sym_options o = {0};

    unsetenv("DEBUGINFOD_URLS");
    struct ana_sym *s = symbolize(&o, &m, &got);
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_debuginfod_queries, 0);
    ana_sym_destroy(s);

    /* Configured, but nothing listens there: asked once per module that
     * is missing (sym_chain), answered no, still module+offset. */
    snprintf(cache, sizeof(cache), "%s/debuginfod-cache", dir);
    setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
    setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
    setenv("DEBUGINFOD_TIMEOUT", "5", 1);
    s = symbolize(&o, &m, &got);
    ana_sym_get_stats(s, &stats);
    unsetenv("DEBUGINFOD_URLS");
    assert_int_equal(stats.nr_debuginfod_queries, 1);
    assert_unresolved(&got, "sym_chain");
    assert_int_equal(ana_sym_nr_notes(s), 1);
    ana_sym_destroy(s);
}

/* A local debuginfod: python3's static HTTP server over a directory laid
 * out as debuginfod's URLs (buildid/<hex>/debuginfo). Returns its pid and
 * port, or pid -1 if python3 cannot be run. *pipe_fd stays open until the
 * server is stopped: a write into a closed pipe would kill it. */
static pid_t start_http(const char *root, int *port, int *pipe_fd)
{
    int fds[2];
    char line[64];

    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        if (chdir(root) == 0)
            execlp("python3", "python3", "-c",
                   "import http.server, socketserver\n"
                   "class Quiet(http.server.SimpleHTTPRequestHandler):\n"
                   "    def log_message(self, *a): pass\n"
                   "s = socketserver.TCPServer(('127.0.0.1', 0), Quiet)\n"
                   "import sys\n"
                   "sys.stdout.write('%d\\n' % s.server_address[1])\n"
                   "sys.stdout.flush()\n"
                   "s.serve_forever()\n",
                   (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    /* The whole line: the port is printed once the socket listens. */
    while (pid > 0 && n < sizeof(line) - 1 && read(fds[0], line + n, 1) == 1 && line[n] != '\n')
        n++;
    line[n] = '\0';
    if (pid <= 0 || n == 0) {
        if (pid > 0)
            waitpid(pid, NULL, 0);
        close(fds[0]);
        return -1;
    }
    *port = atoi(line);
    *pipe_fd = fds[0];
    return pid;
}

/* Configured and answering: the missing binary comes from debuginfod, by
 * build id, and symbolizes as at home. */
static void test_debuginfod_serves_missing_binary(void **state)
{
    const struct fmt_module *orig = symfix_module(&fx, "sym_chain");
    struct text ref, got;
    struct ana_sym_stats stats;
    char root[600], id[2 * FMT_MAX_BUILD_ID + 1], url[64], cache[600];
    int port = 0;

    reference(&ref);
    for (uint32_t i = 0; i < orig->build_id_len; i++)
        snprintf(id + 2 * i, 3, "%02x", orig->build_id[i]);
    snprintf(root, sizeof(root), "%s/debuginfod", dir);
    assert_int_equal(symfix_sh("mkdir -p %s/buildid/%s && cp %s %s/buildid/%s/debuginfo", root, id,
                               symfix_program("sym_chain"), root, id),
                     0);
    int pipe_fd = -1;
    pid_t pid = start_http(root, &port, &pipe_fd);
    if (pid < 0) /* scripts/setup.sh --test installs python3 */
        fail_msg("the debuginfod test server (python3) did not start: run "
                 "scripts/setup.sh --test");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(cache, sizeof(cache), "%s/debuginfod-cache-2", dir);
    setenv("DEBUGINFOD_URLS", url, 1);
    setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
    setenv("DEBUGINFOD_TIMEOUT", "10", 1);

    struct fmt_module m = exe_at("/nonexistent/elsewhere/sym_chain");
    struct ana_sym_options o = {0};
    struct ana_sym *s = symbolize(&o, &m, &got);
    unsetenv("DEBUGINFOD_URLS");
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    close(pipe_fd);
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_debuginfod_queries, 1);
    for (size_t i = 0; i < ana_sym_nr_notes(s); i++)
        print_message("  note: %s\n", ana_sym_note(s, i));
    assert_int_equal(ana_sym_nr_notes(s), 0);
    assert_same_text(&ref, &got);
    ana_sym_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moved_found_by_debug_dir_name),
        cmocka_unit_test(test_moved_found_by_build_id),
        cmocka_unit_test(test_sysroot),
        cmocka_unit_test(test_debuglink),
        cmocka_unit_test(test_changed_binary),
        cmocka_unit_test(test_not_elf),
        cmocka_unit_test(test_debuginfod_only_when_configured),
        cmocka_unit_test(test_debuginfod_serves_missing_binary),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
