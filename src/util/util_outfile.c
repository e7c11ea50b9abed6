/* SPDX-License-Identifier: MIT */
/* The files memscribe writes, made so that no other local user can plant
 * them (util_outfile.h). */
#include "util/util_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tries at making the name: each lost race (the name removed or made again
 * between two calls) costs one. */
#define UTIL_OUTFILE_TRIES 8

static const char *util_outfile_kind(mode_t m)
{
    return S_ISREG(m)    ? "file"
           : S_ISLNK(m)  ? "symbolic link"
           : S_ISFIFO(m) ? "FIFO"
           : S_ISCHR(m)  ? "character device"
           : S_ISBLK(m)  ? "block device"
           : S_ISSOCK(m) ? "socket"
           : S_ISDIR(m)  ? "directory"
                         : "special file";
}

/* Owned by the caller, or by root (a system file: /dev/null, /dev/stdout)? */
static int util_outfile_trusted(uid_t uid)
{
    return uid == geteuid() || uid == 0;
}

__attribute__((format(printf, 3, 4))) static int util_outfile_say(struct util_outfile *o, int err,
                                                                  const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(o->why, sizeof(o->why), fmt, ap);
    va_end(ap);
    return -err;
}

static int util_outfile_fail(struct util_outfile *o, int err)
{
    return util_outfile_say(o, err, "%s", strerror(err));
}

/* Refuse what st describes (what, e.g. "an existing" or "a symbolic link
 * to a"), naming its owner. */
static int util_outfile_refuse(struct util_outfile *o, int err, const char *what,
                               const struct stat *st, const char *after)
{
    struct passwd pw, *res = NULL;
    char buf[1024], owner[96];

    if (getpwuid_r(st->st_uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        snprintf(owner, sizeof(owner), "%.64s (uid %u)", res->pw_name, (unsigned)st->st_uid);
    else
        snprintf(owner, sizeof(owner), "uid %u", (unsigned)st->st_uid);
    return util_outfile_say(o, err, "refused: %s %s of user %s, not yours%s", what,
                            util_outfile_kind(st->st_mode), owner, after);
}

/* fd was opened on what is there already: keep it if it is what was
 * checked (same file as *was when was is not NULL) and may be written. */
static int util_outfile_keep(int fd, int acc, const struct stat *was, const char *what,
                             struct util_outfile *o)
{
    struct stat st;
    int rc = 0;

    if (fstat(fd, &st) != 0)
        rc = util_outfile_fail(o, errno);
    else if (was && (st.st_dev != was->st_dev || st.st_ino != was->st_ino))
        rc = util_outfile_say(o, EAGAIN, "it changed while it was opened");
    else if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
        rc = util_outfile_refuse(o, EPERM, what, &st, "");
    else if (!S_ISREG(st.st_mode) && !util_outfile_trusted(st.st_uid))
        rc = util_outfile_refuse(o, EPERM, what, &st, "");
    else if (S_ISREG(st.st_mode) && acc != O_RDONLY && ftruncate(fd, 0) != 0)
        rc = util_outfile_fail(o, errno);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

/* An existing regular file of the caller's that cannot be unlinked: emptied
 * in place, if it has no other name. */
static int util_outfile_in_place(const char *path, int acc, const struct stat *st,
                                 struct util_outfile *o)
{
    int fd;

    if (st->st_nlink != 1)
        return util_outfile_say(o, EPERM,
                                "refused: it cannot be removed, and it has other names (hard "
                                "links) that writing in place would change");
    fd = open(path, acc | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return util_outfile_fail(o, errno);
    return util_outfile_keep(fd, acc, st, "an existing", o);
}

int util_outfile_open(const char *path, int acc, mode_t mode, struct util_outfile *o)
{
    o->created = 0;
    o->why[0] = 0;
    for (int i = 0; i < UTIL_OUTFILE_TRIES; i++) {
        struct stat st;
        int fd = open(path, acc | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);

        if (fd >= 0) {
            o->created = 1;
            return fd;
        }
        if (errno != EEXIST)
            return util_outfile_fail(o, errno);
        if (lstat(path, &st) != 0) {
            if (errno == ENOENT)
                continue; /* removed meanwhile: make it */
            return util_outfile_fail(o, errno);
        }
        if (S_ISDIR(st.st_mode))
            return util_outfile_fail(o, EISDIR);
        if (S_ISLNK(st.st_mode)) {
            if (!util_outfile_trusted(st.st_uid))
                return util_outfile_refuse(o, EPERM, "a", &st, " (not followed)");
            fd = open(path, acc | O_NOCTTY | O_CLOEXEC);
            if (fd < 0 && errno == ENOENT)
                return util_outfile_say(o, ENOENT,
                                        "refused: a symbolic link to nothing (no "
                                        "file is made through a link)");
            if (fd < 0)
                return util_outfile_fail(o, errno);
            return util_outfile_keep(fd, acc, NULL, "a symbolic link to a", o);
        }
        if (S_ISREG(st.st_mode)) {
            if (st.st_uid != geteuid())
                return util_outfile_refuse(o, EPERM, "an existing", &st,
                                           " (not replaced: remove it, or choose another name)");
            if (unlink(path) == 0 || errno == ENOENT)
                continue;
            if (errno == EACCES || errno == EPERM || errno == EROFS)
                return util_outfile_in_place(path, acc, &st, o);
            return util_outfile_fail(o, errno);
        }
        /* A device, a FIFO, a socket: written as it is. */
        if (!util_outfile_trusted(st.st_uid))
            return util_outfile_refuse(o, EPERM, "an existing", &st, "");
        fd = open(path, acc | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            return util_outfile_fail(o, errno);
        fd = util_outfile_keep(fd, acc, &st, "an existing", o);
        if (fd != -EAGAIN)
            return fd;
    }
    return util_outfile_say(o, EAGAIN, "the name kept changing while it was made");
}

int util_outfile_dir(const char *path, mode_t mode, struct util_outfile *o)
{
    struct stat st;

    o->created = 0;
    o->why[0] = 0;
    if (mkdir(path, mode) == 0) {
        o->created = 1;
        return 0;
    }
    if (errno != EEXIST)
        return util_outfile_fail(o, errno);
    if (lstat(path, &st) != 0)
        return util_outfile_fail(o, errno);
    if (S_ISLNK(st.st_mode)) {
        if (!util_outfile_trusted(st.st_uid))
            return util_outfile_refuse(o, EPERM, "a", &st, " (not followed)");
        if (stat(path, &st) != 0)
            return util_outfile_fail(o, errno);
    }
    if (!util_outfile_trusted(st.st_uid))
        return util_outfile_refuse(o, EPERM, "an existing", &st, "");
    return S_ISDIR(st.st_mode) ? 0 : util_outfile_fail(o, ENOTDIR);
}
