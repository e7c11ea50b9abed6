/* SPDX-License-Identifier: MIT */
/* A trace's source file, read as its owner (cli_source.h). */
#include "cli/cli_source.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_GROUPS 256

/* Who the owner is, for the permission bits: the uid and its groups. */
struct who {
    uid_t uid;
    gid_t groups[MAX_GROUPS];
    int nr_groups;
};

static void who_of(uid_t uid, struct who *w)
{
    const struct passwd *pw = getpwuid(uid);

    w->uid = uid;
    w->nr_groups = 0;
    if (!pw)
        return; /* no such user: only the bits for others apply */
    w->nr_groups = MAX_GROUPS;
    if (getgrouplist(pw->pw_name, pw->pw_gid, w->groups, &w->nr_groups) < 0) {
        /* more groups than room: the primary one alone (a refusal at
         * worst, never a read the owner could not make) */
        w->groups[0] = pw->pw_gid;
        w->nr_groups = 1;
    }
}

/* May w do what (S_IROTH or S_IXOTH: the bit for others) on st? */
static bool may(const struct who *w, const struct stat *st, mode_t what)
{
    if (w->uid == 0)
        return true;
    if (st->st_uid == w->uid)
        return st->st_mode & (what << 6);
    for (int i = 0; i < w->nr_groups; i++)
        if (w->groups[i] == st->st_gid)
            return st->st_mode & (what << 3);
    return st->st_mode & what;
}

/* The file's bytes from fd (st its status). */
static int read_all(int fd, const struct stat *st, struct cli_source *out, const char **why)
{
    if ((size_t)st->st_size > CLI_SOURCE_MAX_BYTES) {
        *why = "larger than 8 MiB";
        return -EFBIG;
    }
    size_t cap = (size_t)st->st_size + 1, len = 0;
    char *text = malloc(cap);
    if (!text) {
        *why = "out of memory";
        return -ENOMEM;
    }
    for (;;) {
        ssize_t n = read(fd, text + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(text);
            *why = strerror(e);
            return -e;
        }
        len += (size_t)n;
        if (n == 0 || len == cap - 1)
            break; /* a file that grows while read: what its size said */
    }
    text[len] = '\0';
    *out = (struct cli_source){.text = text, .len = len, .mtime = st->st_mtime};
    return 0;
}

/* Open part (of a folder dir) as w may, without following a link. */
static int open_part(int dir, const char *part, bool last, const struct who *w, struct stat *st,
                     const char **why)
{
    int fd = openat(dir, part, (last ? O_RDONLY : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0) {
        int e = errno;
        *why = e == ELOOP || e == ENOTDIR ? "a symbolic link or a file on the way: not followed"
                                          : strerror(e);
        return -e;
    }
    if (fstat(fd, st)) {
        int e = errno;
        close(fd);
        *why = strerror(e);
        return -e;
    }
    if (last && !S_ISREG(st->st_mode)) {
        close(fd);
        *why = "not a regular file";
        return -EINVAL;
    }
    if (!may(w, st, last ? S_IROTH : S_IXOTH)) {
        close(fd);
        *why = "the trace's owner may not read it";
        return -EACCES;
    }
    return fd;
}

int cli_source_read(const char *path, uid_t owner, struct cli_source *out, const char **why)
{
    struct who w;
    struct stat st;
    char *copy, *save = NULL;
    int dir, rc = 0;

    *out = (struct cli_source){0};
    if (path[0] != '/') {
        *why = "not an absolute path";
        return -EINVAL;
    }
    if (!(copy = strdup(path))) {
        *why = "out of memory";
        return -ENOMEM;
    }
    who_of(owner, &w);
    if ((dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(dir, &st) ||
        !may(&w, &st, S_IXOTH)) {
        *why = "the root folder cannot be searched";
        rc = -EACCES;
    }
    for (char *part = strtok_r(copy, "/", &save); !rc && part;) {
        char *next = strtok_r(NULL, "/", &save);
        if (!strcmp(part, ".") || !strcmp(part, "..")) {
            *why = "a '.' or '..' in the path";
            rc = -EINVAL;
            break;
        }
        int fd = open_part(dir, part, !next, &w, &st, why);
        close(dir);
        dir = fd;
        if (fd < 0)
            rc = fd;
        else if (!next)
            rc = read_all(fd, &st, out, why);
        part = next;
    }
    if (dir >= 0)
        close(dir);
    free(copy);
    if (!rc && !out->text) {
        *why = "not a file";
        rc = -EISDIR;
    }
    return rc;
}

void cli_source_release(struct cli_source *s)
{
    free(s->text);
    s->text = NULL;
}
