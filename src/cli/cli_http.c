/* SPDX-License-Identifier: MIT */
/* memscribe's one HTTP server (cli_http.h): libmicrohttpd's polling
 * thread, the rules, the deferred work. */
#include "cli/cli_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_serve_clients.h"
#include "cli/cli_serve_pool.h"

struct cli_http {
    struct MHD_Daemon *d;
    struct cli_http_options o;
    char token[80];
    struct cli_serve_clients clients; /* connections per user or address */
    struct cli_serve_pool *pool;      /* the deferred work's queue and workers */
    atomic_int busy;                  /* requests being answered */
};

/* The token a request presents: ?token= (the page's address), else the
 * header Authorization: Bearer (a scraper's credentials_file, a header no
 * other user sees in a process's argv); NULL if neither. */
static const char *presented_token(struct MHD_Connection *c)
{
    const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");

    if (t || !auth || strncasecmp(auth, "Bearer ", 7))
        return t;
    for (auth += 7; *auth == ' '; auth++)
        ;
    return auth;
}

static bool token_ok(const struct cli_http *h, const char *given)
{
    size_t n = strlen(h->token);
    unsigned char diff = 0;

    if (!given || strlen(given) != n)
        return false;
    for (size_t i = 0; i < n; i++) /* the same time whatever matches */
        diff |= (unsigned char)(given[i] ^ h->token[i]);
    return diff == 0;
}

enum MHD_Result cli_http_queue(struct MHD_Connection *c, unsigned status, const char *type,
                               struct MHD_Response *r)
{
    enum MHD_Result rc;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Vary", "Accept-Encoding"); /* answers may be gzipped */
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    /* Only the page's own script and style, and requests to this server. */
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; style-src "
                            "'unsafe-inline'; connect-src 'self'; img-src data:");
    rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

enum MHD_Result cli_http_static(struct MHD_Connection *c, unsigned status, const char *type,
                                const char *body, size_t len)
{
    return cli_http_queue(
        c, status, type,
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT));
}

enum MHD_Result cli_http_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    return cli_http_queue(
        c, status, "text/plain; charset=utf-8",
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY));
}

/* The workers' side of a deferred job: its work, then its connection handed
 * back (the job is not touched after the resume). */
static void job_run(void *arg)
{
    struct cli_http_job *j = arg;

    j->run(j);
}

static void job_end(void *arg, bool ran)
{
    struct cli_http_job *j = arg;
    struct MHD_Connection *c = j->c;

    j->ran = ran;
    j->done = true;
    MHD_resume_connection(c);
}

enum MHD_Result cli_http_defer(struct cli_http *h, struct MHD_Connection *c,
                               struct cli_http_job *job, void **state)
{
    char busy[160];

    job->c = c;
    job->ran = job->done = false;
    if (!cli_serve_pool_push(h->pool, job)) {
        *state = job; /* freed when the request completes */
        MHD_suspend_connection(c);
        return MHD_YES;
    }
    snprintf(busy, sizeof(busy), "%s is busy: %u requests wait; ask again\n", h->o.name,
             cli_serve_pool_waiting(h->pool));
    job->free(job);
    return cli_http_text(c, 503, busy);
}

/* A request with a body (Content-Length above 0, or chunked): a GET has
 * none to read, and a client waiting for "100 Continue" would wait. */
static bool has_body(struct MHD_Connection *c)
{
    const char *len =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

    return (len && strspn(len, "0") != strlen(len)) ||
           MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* libmicrohttpd's per-request state: NULL before the headers, h once they
 * passed, or a deferred job. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    struct cli_http *h = cls;
    char msg[200];

    (void)version;
    (void)upload;
    if (*state && *state != h) { /* deferred work that ran: answer it */
        struct cli_http_job *j = *state;
        return j->done ? j->answer(j, c, j->ran) : MHD_YES;
    }
    if (!*state)
        atomic_fetch_add(&h->busy, 1); /* until completed */
    /* Only GET, without a body: anything else is answered at its headers,
     * its body unread. */
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return cli_http_text(c, 405, "only GET\n");
    if (!*state) { /* the headers: answer once they are all here */
        if (has_body(c)) {
            snprintf(msg, sizeof(msg), "%s: a GET carries no body\n", h->o.name);
            return cli_http_text(c, 413, msg);
        }
        *state = h;
        return MHD_YES;
    }
    *upload_size = 0; /* a GET's body, if any, is not read */
    const char *given = presented_token(c);
    if (!given || !token_ok(h, given)) {
        snprintf(msg, sizeof(msg),
                 "%s: this address needs the token printed when the server started "
                 "(?token=..., or the header 'Authorization: Bearer ...')\n",
                 h->o.name);
        if (given)
            return cli_http_text(c, 403, msg);
        /* none at all: 401, and how to give one (a scraper's bearer token) */
        struct MHD_Response *r =
            MHD_create_response_from_buffer(strlen(msg), msg, MHD_RESPMEM_MUST_COPY);
        if (r)
            MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
        return cli_http_queue(c, 401, "text/plain; charset=utf-8", r);
    }
    return h->o.route(h->o.arg, h, c, url, state);
}

/* A request ended (answered, or its connection closed): a deferred job
 * goes. */
static void completed(void *cls, struct MHD_Connection *c, void **state,
                      enum MHD_RequestTerminationCode how)
{
    struct cli_http *h = cls;

    (void)c;
    (void)how;
    if (*state && *state != cls) {
        struct cli_http_job *j = *state;
        j->free(j);
    }
    *state = NULL;
    if (atomic_load(&h->busy) > 0)
        atomic_fetch_sub(&h->busy, 1);
}

/* A connection from a client at its limit is refused at accept. */
static enum MHD_Result accept_client(void *cls, const struct sockaddr *addr, socklen_t len)
{
    struct cli_http *h = cls;

    return cli_serve_client_may(&h->clients, cli_serve_client_key(&h->clients, addr, len)) ? MHD_YES
                                                                                           : MHD_NO;
}

/* Each connection's client counted from its start to its close. */
static void connection_note(void *cls, struct MHD_Connection *c, void **socket_state,
                            enum MHD_ConnectionNotificationCode code)
{
    struct cli_http *h = cls;
    uint64_t *key = *socket_state;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !(key = malloc(sizeof(*key))))
            return;
        *key = cli_serve_client_key(&h->clients, ci->client_addr,
                                    ci->client_addr->sa_family == AF_INET6
                                        ? sizeof(struct sockaddr_in6)
                                        : sizeof(struct sockaddr_in));
        cli_serve_client_opened(&h->clients, *key);
        *socket_state = key;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && key) {
        cli_serve_client_closed(&h->clients, *key);
        free(key);
        *socket_state = NULL;
    }
}

/* libmicrohttpd's messages about connections (its refusals at its own
 * limit or out of descriptors, clients gone or timed out mid-request)
 * counted with ours, not a line each (a flood of connections wrote 2.66 MB
 * of them in 5 s); any other said. */
static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    struct cli_http *h = cls;
    char msg[256];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = 0;
    if (strstr(msg, "limit") || strstr(msg, "accept"))
        cli_serve_clients_trouble(&h->clients, true);
    else if (strcasestr(msg, "connection"))
        cli_serve_clients_trouble(&h->clients, false);
    else
        cli_warn("serve: %s", msg);
}

/* Connections at once: as many as the descriptors allow, up to
 * MAX_CONNECTIONS (the soft limit raised to the hard one first). */
#define MAX_CONNECTIONS 1000u
#define IDLE_S 30
static unsigned connection_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl))
        return 256;
    if (rl.rlim_cur < MAX_CONNECTIONS + 64 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max < MAX_CONNECTIONS + 64 ? rl.rlim_max : MAX_CONNECTIONS + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur <= 128)
        return 64;
    return rl.rlim_cur - 64 < MAX_CONNECTIONS ? (unsigned)(rl.rlim_cur - 64) : MAX_CONNECTIONS;
}

static int bind_address(const char *listen, uint16_t port, struct sockaddr_storage *ss)
{
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET, listen, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        return AF_INET;
    }
    if (inet_pton(AF_INET6, listen, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        return AF_INET6;
    }
    return -1;
}

int cli_http_can_listen(const char *listen, uint16_t port, char *msg, size_t msg_size)
{
    struct sockaddr_storage ss;
    int family = bind_address(listen, port, &ss), one = 1, rc = 0;

    if (family < 0) {
        snprintf(msg, msg_size, "%s: not an IPv4 or IPv6 address", listen);
        return -EINVAL;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(fd, (struct sockaddr *)&ss,
             family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6))) {
        rc = -errno;
        snprintf(msg, msg_size, "cannot listen on %s port %u: %s", listen, (unsigned)port,
                 strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

int cli_http_start(struct cli_http **out, const struct cli_http_options *o, uint16_t *port,
                   char *msg, size_t msg_size)
{
    struct sockaddr_storage ss;
    int family = bind_address(o->listen, o->port, &ss);
    struct cli_http *h;

    if (family < 0) {
        snprintf(msg, msg_size, "--listen %s: not an IPv4 or IPv6 address", o->listen);
        return -EINVAL;
    }
    if (!(h = calloc(1, sizeof(*h))))
        return -ENOMEM;
    h->o = *o;
    snprintf(h->token, sizeof(h->token), "%s", o->token);
    cli_serve_clients_init(&h->clients, o->port);
    int rc = cli_serve_pool_start(&h->pool, job_run, job_end);
    if (rc) {
        snprintf(msg, msg_size, "cannot start the workers: %s", strerror(-rc));
        goto fail;
    }
    /* Idle connections close after IDLE_S. */
    h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                                MHD_USE_ERROR_LOG | (family == AF_INET6 ? MHD_USE_IPv6 : 0),
                            o->port, accept_client, h, handle, h, MHD_OPTION_EXTERNAL_LOGGER,
                            log_mhd, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, h, MHD_OPTION_NOTIFY_CONNECTION,
                            connection_note, h, MHD_OPTION_END);
    if (!h->d) {
        rc = -(errno ? errno : EADDRINUSE);
        snprintf(msg, msg_size, "cannot listen on %s port %u: %s", o->listen, (unsigned)o->port,
                 strerror(-rc));
        goto fail;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    *port = di ? di->port : o->port;
    cli_serve_clients_set_port(&h->clients, *port);
    *out = h;
    return 0;
fail:
    cli_serve_pool_stop(h->pool);
    cli_serve_clients_release(&h->clients);
    free(h);
    return rc;
}

void cli_http_stop(struct cli_http *h)
{
    if (!h)
        return;
    /* The jobs queued end first, those running are cut short: every
     * suspended connection is handed back before the daemon stops. */
    cli_serve_pool_stop(h->pool);
    MHD_stop_daemon(h->d); /* every response is sent or dropped */
    cli_serve_clients_release(&h->clients);
    free(h);
}

bool cli_http_busy(struct cli_http *h)
{
    return atomic_load(&h->busy) > 0;
}
