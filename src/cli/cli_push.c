/* SPDX-License-Identifier: MIT */
/* A push to a Prometheus Pushgateway (cli_push.h). */
#include "cli/cli_push.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PUSH_TIMEOUT_MS 10000

/* url's host, port and path prefix: 0, or -1 (not http://HOST[:PORT][/PATH]). */
static int split_url(const char *url, char *host, size_t hsize, char *port, size_t psize,
                     const char **path)
{
    if (strncmp(url, "http://", 7))
        return -1;
    const char *h = url + 7, *slash = strchr(h, '/'), *end = slash ? slash : h + strlen(h);
    const char *colon = memchr(h, ':', (size_t)(end - h));
    size_t hn = (size_t)((colon ? colon : end) - h);
    size_t pn = colon ? (size_t)(end - colon - 1) : 2;

    if (!hn || hn >= hsize || pn >= psize || (colon && !pn))
        return -1;
    snprintf(host, hsize, "%.*s", (int)hn, h);
    snprintf(port, psize, "%.*s", (int)pn, colon ? colon + 1 : "80");
    *path = slash ? slash : "";
    return 0;
}

static bool segment_ok(const char *s)
{
    return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                     strlen(s);
}

static int connect_to(const char *host, const char *port, char *err, size_t err_size)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai, *a;
    int rc = getaddrinfo(host, port, &hints, &ai), fd = -1;

    if (rc) {
        snprintf(err, err_size, "%s: %s", host, gai_strerror(rc));
        return -1;
    }
    for (a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
            snprintf(err, err_size, "%s:%s: %s", host, port, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int cli_push_metrics(const char *url, const char *job, const char *instance, const char *body,
                     size_t len, char *err, size_t err_size)
{
    char host[256], port[8], head[1024], reply[512];
    const char *prefix;
    int fd, status = 0;
    size_t got = 0;

    if (split_url(url, host, sizeof(host), port, sizeof(port), &prefix)) {
        snprintf(err, err_size, "%s: not http://HOST[:PORT] (a Pushgateway's address)", url);
        return -1;
    }
    if (!segment_ok(job) || !segment_ok(instance)) {
        snprintf(err, err_size, "a job and an instance are letters, digits and ._- only");
        return -1;
    }
    if ((fd = connect_to(host, port, err, err_size)) < 0)
        return -1;
    int n = snprintf(head, sizeof(head),
                     "PUT %s/metrics/job/%s/instance/%s HTTP/1.1\r\nHost: %s:%s\r\n"
                     "Content-Type: text/plain; version=0.0.4\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     strcmp(prefix, "/") ? prefix : "", job, instance, host, port, len);
    if (n < 0 || (size_t)n >= sizeof(head) || send_all(fd, head, (size_t)n) ||
        send_all(fd, body, len)) {
        snprintf(err, err_size, "%s: cannot send the metrics: %s", url, strerror(errno));
        close(fd);
        return -1;
    }
    struct pollfd p = {fd, POLLIN, 0};
    while (got + 1 < sizeof(reply) && poll(&p, 1, PUSH_TIMEOUT_MS) > 0) {
        ssize_t r = read(fd, reply + got, sizeof(reply) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    reply[got] = 0;
    if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1 || status < 200 || status > 299) {
        const char *body_at = strstr(reply, "\r\n\r\n");
        snprintf(err, err_size, "%s: the Pushgateway answered %.*s%s%.200s", url,
                 (int)strcspn(reply, "\r\n"), got ? reply : "nothing", body_at ? ": " : "",
                 body_at ? body_at + 4 : "");
        return -1;
    }
    return 0;
}
