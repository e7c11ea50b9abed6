/* SPDX-License-Identifier: MIT */
/* util_outfile: a fresh name is made at once with O_EXCL; the caller's own
 * file is replaced (a hard link to it keeps what it held); another user's
 * file, symbolic link or FIFO is refused, saying whose, and left as it was;
 * the caller's or root's links (/dev/stdout) and devices (/dev/null) and the
 * caller's FIFOs are written as they are; a link to nothing and a directory
 * are refused. Cases about another user chown files to nobody's uid, so they
 * need root (they are skipped otherwise; the e2e tests run them as nobody). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/util_outfile.h"

#define OTHER_UID 65534 /* nobody */

struct dir {
    char path[64];
    char name[128];
};

static int setup(void **state)
{
    struct dir *d = calloc(1, sizeof(*d));

    snprintf(d->path, sizeof(d->path), "/tmp/test_util_outfile.XXXXXX");
    if (!mkdtemp(d->path))
        return -1;
    snprintf(d->name, sizeof(d->name), "%s/out", d->path);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct dir *d = *state;
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
    (void)!system(cmd);
    free(d);
    return 0;
}

static void put(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void expect_text(const char *path, const char *text)
{
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);

    assert_true(fd >= 0);
    assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
    close(fd);
    assert_string_equal(buf, text);
}

/* d->name made a symbolic link to a file d->path/TEXT holding TEXT, whose
 * path goes to target. */
static void link_to_file(struct dir *d, const char *text, char *target, size_t size)
{
    snprintf(target, size, "%s/%s", d->path, text);
    put(target, text);
    assert_int_equal(symlink(target, d->name), 0);
}

/* Opening path is refused with -err, saying phrase. */
static void expect_refused(const char *path, int err, const char *phrase)
{
    struct util_outfile o;

    assert_int_equal(util_outfile_open(path, O_WRONLY, 0644, &o), -err);
    assert_non_null(strstr(o.why, phrase));
}

static void need_root(void)
{
    if (geteuid() != 0)
        skip();
}

static void test_fresh(void **state)
{
    struct dir *d = *state;
    struct util_outfile o;
    struct stat st;
    int fd = util_outfile_open(d->name, O_WRONLY, 0600, &o);

    assert_true(fd >= 0);
    assert_int_equal(o.created, 1);
    assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    assert_int_equal(write(fd, "new", 3), 3);
    close(fd);
    assert_int_equal(lstat(d->name, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    expect_text(d->name, "new");
}

static void test_own_file_replaced(void **state)
{
    struct dir *d = *state;
    struct util_outfile o;
    char other[160];
    int fd;

    snprintf(other, sizeof(other), "%s/link", d->path);
    put(d->name, "old");
    assert_int_equal(link(d->name, other), 0);
    fd = util_outfile_open(d->name, O_WRONLY, 0644, &o);
    assert_true(fd >= 0);
    assert_int_equal(o.created, 1);
    assert_int_equal(write(fd, "new", 3), 3);
    close(fd);
    expect_text(d->name, "new");
    expect_text(other, "old"); /* unlinked and made anew: the other name is untouched */
}

static void test_other_users_file(void **state)
{
    struct dir *d = *state;

    need_root();
    put(d->name, "planted");
    assert_int_equal(chown(d->name, OTHER_UID, OTHER_UID), 0);
    expect_refused(d->name, EPERM, "refused: an existing file of user");
    expect_refused(d->name, EPERM, "(uid 65534), not yours (not replaced");
    expect_text(d->name, "planted");
}

static void test_other_users_link(void **state)
{
    struct dir *d = *state;
    char target[160];

    need_root();
    link_to_file(d, "precious", target, sizeof(target));
    assert_int_equal(lchown(d->name, OTHER_UID, OTHER_UID), 0);
    expect_refused(d->name, EPERM, "refused: a symbolic link of user");
    expect_refused(d->name, EPERM, "not followed");
    expect_text(target, "precious");
}

static void test_own_link_to_other_users_file(void **state)
{
    struct dir *d = *state;
    char target[160];

    need_root();
    link_to_file(d, "theirs", target, sizeof(target));
    assert_int_equal(chown(target, OTHER_UID, OTHER_UID), 0);
    expect_refused(d->name, EPERM, "refused: a symbolic link to a file of user");
    expect_text(target, "theirs");
}

static void test_own_link_to_own_file(void **state)
{
    struct dir *d = *state;
    struct util_outfile o;
    char target[160];
    int fd;

    link_to_file(d, "longer old text", target, sizeof(target));
    fd = util_outfile_open(d->name, O_WRONLY, 0644, &o);
    assert_true(fd >= 0);
    assert_int_equal(o.created, 0);
    assert_int_equal(write(fd, "new", 3), 3);
    close(fd);
    expect_text(target, "new"); /* emptied first, as /dev/stdout into a file is */
}

static void test_devices(void **state)
{
    struct dir *d = *state;
    struct util_outfile o;
    int fd;

    fd = util_outfile_open("/dev/null", O_WRONLY, 0644, &o);
    assert_true(fd >= 0);
    assert_int_equal(o.created, 0);
    close(fd);
    /* A link of the caller's to a device, as /dev/stdout is root's link to
     * /proc/self/fd/1 (tests/e2e/record_planted.sh writes to that one). */
    assert_int_equal(symlink("/dev/null", d->name), 0);
    fd = util_outfile_open(d->name, O_WRONLY, 0644, &o);
    assert_true(fd >= 0);
    assert_int_equal(o.created, 0);
    close(fd);
}

static void test_fifos(void **state)
{
    struct dir *d = *state;
    struct util_outfile o;
    int rd, fd;

    assert_int_equal(mkfifo(d->name, 0600), 0);
    rd = open(d->name, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    fd = util_outfile_open(d->name, O_WRONLY, 0644, &o);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
    close(rd);
    if (geteuid() != 0)
        return;
    assert_int_equal(chown(d->name, OTHER_UID, OTHER_UID), 0);
    expect_refused(d->name, EPERM, "refused: an existing FIFO of user");
}

static void test_refused_shapes(void **state)
{
    struct dir *d = *state;
    char missing[160];

    snprintf(missing, sizeof(missing), "%s/missing", d->path);
    assert_int_equal(symlink(missing, d->name), 0);
    expect_refused(d->name, ENOENT, "refused: a symbolic link to nothing");
    assert_int_equal(access(missing, F_OK), -1); /* nothing made through the link */
    expect_refused(d->path, EISDIR, strerror(EISDIR));
    snprintf(missing, sizeof(missing), "%s/no/such/dir", d->path);
    expect_refused(missing, ENOENT, strerror(ENOENT));
}

static void test_dir(void **state)
{
    struct dir *d = *state;
    struct util_outfile o;
    char link[160];

    assert_int_equal(util_outfile_dir(d->name, 0755, &o), 0);
    assert_int_equal(o.created, 1);
    assert_int_equal(util_outfile_dir(d->name, 0755, &o), 0);
    assert_int_equal(o.created, 0);
    assert_int_equal(util_outfile_dir("/tmp", 0755, &o), 0); /* root's */
    if (geteuid() != 0)
        return;
    snprintf(link, sizeof(link), "%s/link", d->path);
    assert_int_equal(symlink(d->name, link), 0);
    assert_int_equal(lchown(link, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(util_outfile_dir(link, 0755, &o), -EPERM);
    assert_non_null(strstr(o.why, "refused: a symbolic link of user"));
    assert_int_equal(chown(d->name, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(util_outfile_dir(d->name, 0755, &o), -EPERM);
    assert_non_null(strstr(o.why, "refused: an existing directory of user"));
}

int main(void)
{
#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        CASE(test_fresh),
        CASE(test_own_file_replaced),
        CASE(test_other_users_file),
        CASE(test_other_users_link),
        CASE(test_own_link_to_other_users_file),
        CASE(test_own_link_to_own_file),
        CASE(test_devices),
        CASE(test_fifos),
        CASE(test_refused_shapes),
        CASE(test_dir),
    };
#undef CASE

    return cmocka_run_group_tests(tests, NULL, NULL);
}
