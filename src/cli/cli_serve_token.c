/* SPDX-License-Identifier: MIT */
/* memscribe serve's token (cli_serve_token.h). */
#include "cli/cli_serve_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/util_outfile.h"

#define MIN_TOKEN 16
#define MAX_TOKEN 64
_Static_assert(CLI_SERVE_TOKEN_SIZE > MAX_TOKEN, "a token and its NUL fit");

static void random_token(char *out, size_t size)
{
    unsigned char raw[16];

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        cli_die("serve: no random bytes for the token: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < size; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* A token's characters: a bearer token's (RFC 6750's b64token), no space. */
static bool token_chars(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~+/=-", t[i]))
            return false;
    return n >= MIN_TOKEN && n <= MAX_TOKEN;
}

static void read_token(const char *file, int fd, char *out, size_t size)
{
    struct stat st;
    char buf[MAX_TOKEN + 2];
    ssize_t n;

    if (fstat(fd, &st))
        cli_die("serve: %s: %s", file, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        cli_die("serve: %s: a token file must be a regular file of yours that no one else may "
                "read or write (chmod 600)",
                file);
    if ((n = read(fd, buf, sizeof(buf) - 1)) < 0)
        cli_die("serve: %s: %s", file, strerror(errno));
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = 0;
    if (!token_chars(buf, (size_t)n) || (size_t)n + 1 > size)
        cli_die("serve: %s: a token is %d to %d letters, digits or ._~+/=- on one line", file,
                MIN_TOKEN, MAX_TOKEN);
    memcpy(out, buf, (size_t)n + 1);
}

void cli_serve_token(const char *file, char *out, size_t size)
{
    struct util_outfile made;
    int fd;

    if (!file) {
        random_token(out, size);
        return;
    }
    if ((fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
        read_token(file, fd, out, size);
        close(fd);
        return;
    }
    if (errno != ENOENT)
        cli_die("serve: %s: %s", file,
                errno == ELOOP ? "a symbolic link: refused" : strerror(errno));
    random_token(out, size);
    if ((fd = util_outfile_open(file, O_WRONLY, 0600, &made)) < 0)
        cli_die("serve: %s: cannot create it: %s", file, made.why);
    /* no newline: Prometheus's credentials_file is used as it is */
    if (write(fd, out, strlen(out)) != (ssize_t)strlen(out) || close(fd))
        cli_die("serve: %s: cannot write it: %s", file, strerror(errno));
}
