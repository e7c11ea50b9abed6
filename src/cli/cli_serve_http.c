/* SPDX-License-Identifier: MIT */
/* memscribe serve's HTTP side (cli_serve_http.h). libmicrohttpd's one
 * polling thread reads every connection and answers what is at hand (the
 * page, the status, a kept answer); a query to run is queued for the
 * workers (cli_serve_pool.h), its connection suspended until it ran, so a
 * slow query (a large trace replayed) holds up no other request. Each
 * query runs memscribe's own command in a child (cli_serve_query.c). Each
 * user or address holds a bounded share of the connections
 * (cli_serve_clients.h). */
#include "cli/cli_serve_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cli_serve_clients.h"
#include "cli/cli_serve_gzip.h"
#include "cli/cli_serve_index.h"
#include "cli/cli_serve_pool.h"

/* Answers kept, each until the trace's size or time changes: a finished
 * trace answers each query once, and a page that polls a growing trace
 * costs one run per change, however many tabs look. At most this many
 * answers and bytes of them (the least recently used go first; an answer
 * larger than the bytes is sent, not kept): with the answers being sent,
 * the server's memory (docs/serve.md, "Scale"). */
#define CACHE_ENTRIES 32
#define CACHE_BYTES (128u << 20)
#define MAX_KEY 256

/* An answer's body, held once by the cache and every response sending it
 * (refs), freed by the last. */
struct body {
    unsigned refs;
    size_t len;
    char *data;
    bool gzip; /* data is gzip (cli_serve_gzip.h) */
};

struct cache_entry {
    char key[MAX_KEY];
    uint64_t size, mtime_ns;
    unsigned status;
    const char *type;
    struct body *body;
    uint64_t used;
};

struct cli_serve_http {
    struct MHD_Daemon *d;
    struct cli_serve_clients clients; /* connections per user or address */
    struct cli_serve_pool *pool;      /* the queries' queue and workers */
    struct cli_serve_end end;         /* how a live recording ended (the status says) */
    atomic_int busy;                  /* requests being answered */
    atomic_ullong last_ms;            /* when the last one ended (CLOCK_MONOTONIC) */
    struct cli_serve_trace trace;
    char token[80];
    const char *page;
    pthread_mutex_t lock; /* the cache and every body's refs */
    struct cache_entry cache[CACHE_ENTRIES];
    size_t cache_bytes;
    uint64_t clock;
};

/* Lock held. */
static void body_drop(struct body *b)
{
    if (b && !--b->refs) {
        free(b->data);
        free(b);
    }
}

struct sent {
    struct cli_serve_http *h;
    struct body *b;
};

/* Drop a reference to b, taking the lock. */
static void body_release(struct cli_serve_http *h, struct body *b)
{
    pthread_mutex_lock(&h->lock);
    body_drop(b);
    pthread_mutex_unlock(&h->lock);
}

/* libmicrohttpd is done sending a shared body. */
static void body_sent(void *arg)
{
    struct sent *s = arg;

    body_release(s->h, s->b);
    free(s);
}

static bool token_ok(const struct cli_serve_http *h, const char *given)
{
    size_t n = strlen(h->token);
    unsigned char diff = 0;

    if (!given || strlen(given) != n)
        return false;
    for (size_t i = 0; i < n; i++) /* the same time whatever matches */
        diff |= (unsigned char)(given[i] ^ h->token[i]);
    return diff == 0;
}

/* Send r (NULL: out of memory) with the headers every answer has. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, const char *type,
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

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             const char *body, size_t len)
{
    return queue(c, status, type,
                 MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT));
}

/* Send a shared body with the caller's reference to it, which the
 * response holds until it is sent. */
/* A gzipped body for a client that does not take gzip: inflated for
 * this reply alone (the kept body stays small). */
static enum MHD_Result reply_inflated(struct cli_serve_http *h, struct MHD_Connection *c,
                                      unsigned status, const char *type, struct body *b)
{
    char *data;
    size_t len;
    int rc = cli_gzip_inflate(b->data, b->len, &data, &len);

    body_release(h, b);
    if (rc)
        return MHD_NO;
    return queue(c, status, type,
                 MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE));
}

static enum MHD_Result reply_shared(struct cli_serve_http *h, struct MHD_Connection *c,
                                    unsigned status, const char *type, struct body *b)
{
    struct sent *s;
    struct MHD_Response *r = NULL;

    if (b->gzip && !cli_gzip_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                                  MHD_HTTP_HEADER_ACCEPT_ENCODING)))
        return reply_inflated(h, c, status, type, b);
    if ((s = malloc(sizeof(*s)))) {
        *s = (struct sent){h, b};
        r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, body_sent, s);
    }
    if (!r) {
        free(s);
        body_release(h, b);
        return MHD_NO;
    }
    if (b->gzip)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    return queue(c, status, type, r);
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    return reply(c, status, "text/plain; charset=utf-8", text, strlen(text));
}

struct cache_key {
    char key[MAX_KEY];
    size_t len;
};

/* The cache key grows by every parameter of the URL but the token, in
 * the URL's order: a query's answer depends on its parameters alone, and
 * no list of them here has to follow the queries' table. */
static enum MHD_Result add_to_key(void *arg, enum MHD_ValueKind kind, const char *name,
                                  const char *value)
{
    struct cache_key *k = arg;
    int n;

    (void)kind;
    if (!strcmp(name, "token") || k->len >= MAX_KEY)
        return MHD_YES;
    n = snprintf(k->key + k->len, MAX_KEY - k->len, "&%s=%s", name, value ? value : "");
    k->len = n < 0 ? MAX_KEY : k->len + (size_t)n;
    return MHD_YES;
}

static struct cache_entry *cache_find(struct cli_serve_http *h, const char *key, uint64_t size,
                                      uint64_t mtime)
{
    for (size_t i = 0; i < CACHE_ENTRIES; i++) {
        struct cache_entry *e = &h->cache[i];

        if (e->body && !strcmp(e->key, key) && e->size == size && e->mtime_ns == mtime)
            return e;
    }
    return NULL;
}

/* Lock held. Forget entry e. */
static void cache_drop(struct cli_serve_http *h, struct cache_entry *e)
{
    if (!e->body)
        return;
    h->cache_bytes -= e->body->len;
    body_drop(e->body);
    e->body = NULL;
}

/* Lock held. Keep b (one more reference) as key's answer, forgetting the
 * least recently used until it fits. */
static void cache_put(struct cli_serve_http *h, const char *key, uint64_t size, uint64_t mtime,
                      unsigned status, const char *type, struct body *b)
{
    if (b->len > CACHE_BYTES)
        return;
    for (;;) {
        struct cache_entry *lru = NULL;
        size_t n = 0;
        for (size_t i = 0; i < CACHE_ENTRIES; i++) {
            struct cache_entry *e = &h->cache[i];
            n += e->body != NULL;
            if (e->body && (!lru || e->used < lru->used))
                lru = e;
        }
        if (n < CACHE_ENTRIES && h->cache_bytes + b->len <= CACHE_BYTES)
            break;
        cache_drop(h, lru);
    }
    for (size_t i = 0; i < CACHE_ENTRIES; i++) {
        struct cache_entry *e = &h->cache[i];
        if (e->body)
            continue;
        *e = (struct cache_entry){.size = size,
                                  .mtime_ns = mtime,
                                  .status = status,
                                  .type = type,
                                  .body = b,
                                  .used = ++h->clock};
        snprintf(e->key, sizeof(e->key), "%s", key);
        b->refs++;
        h->cache_bytes += b->len;
        return;
    }
}

/* A query's request from its headers to its end: libmicrohttpd's
 * per-request pointer, freed when the request completes (completed). Its
 * parameters are copied, so that a worker reads no connection. */
#define MAX_ARGS 16
struct request {
    struct cli_serve_http *h;
    struct MHD_Connection *c;
    char name[40];
    struct cache_key key;
    uint64_t size, mtime; /* the trace's version before the query */
    bool cacheable;
    char *args[2 * MAX_ARGS]; /* name, value */
    size_t nr_args;
    struct cli_serve_answer a;
    int rc;
    bool ran, done;
};

static void request_free(struct request *q)
{
    for (size_t i = 0; i < 2 * q->nr_args; i++)
        free(q->args[i]);
    free(q->a.body);
    free(q);
}

static const char *request_param(void *arg, const char *name)
{
    const struct request *q = arg;

    for (size_t i = 0; i < q->nr_args; i++)
        if (!strcmp(q->args[2 * i], name))
            return q->args[2 * i + 1];
    return NULL;
}

static enum MHD_Result copy_arg(void *arg, enum MHD_ValueKind kind, const char *name,
                                const char *value)
{
    struct request *q = arg;

    (void)kind;
    if (q->nr_args == MAX_ARGS || !strcmp(name, "token"))
        return MHD_YES; /* more than any query takes: the query says which it knows */
    char *n = strdup(name), *v = strdup(value ? value : "");
    if (!n || !v) {
        free(n);
        free(v);
        q->rc = -ENOMEM;
        return MHD_NO;
    }
    q->args[2 * q->nr_args] = n;
    q->args[2 * q->nr_args++ + 1] = v;
    return MHD_YES;
}

/* The worker's part: run the query. */
static void request_run(void *job)
{
    struct request *q = job;

    q->rc = cli_serve_query(&q->h->trace, q->name, request_param, q, &q->a);
}

/* Its end: the connection, suspended while the query waited and ran, is
 * handed back (handle answers it). The request is not touched after. */
static void request_end(void *job, bool ran)
{
    struct request *q = job;
    struct MHD_Connection *c = q->c;

    q->ran = ran;
    q->done = true;
    MHD_resume_connection(c);
}

/* Answer q's query once it ran: its output becomes the body the cache and
 * the reply share. */
static enum MHD_Result answer(struct cli_serve_http *h, struct MHD_Connection *c, struct request *q)
{
    struct cli_serve_answer *a = &q->a;

    if (!q->ran || q->rc == -ECANCELED)
        return send_text(c, 503, "memscribe serve is stopping\n");
    if (q->rc < 0)
        return send_text(c, 500, "the server could not run the query\n");
    /* its buffer's slack given back */
    struct body *b = malloc(sizeof(*b));
    char *data = a->body_len ? realloc(a->body, a->body_len) : a->body;
    if (a->body_len && data)
        a->body = data;
    if (!b || (a->body_len && !data)) {
        free(b);
        return send_text(c, 500, "the server ran out of memory\n");
    }
    *b = (struct body){1, a->body_len, a->body, a->gzip}; /* the reply's reference */
    a->body = NULL;
    /* Keep answers that are the trace's, not a passing failure. */
    pthread_mutex_lock(&h->lock);
    if (q->cacheable && (a->status == 200 || a->status == 400) && q->key.len < MAX_KEY)
        cache_put(h, q->key.key, q->size, q->mtime, a->status, a->type, b);
    pthread_mutex_unlock(&h->lock);
    return reply_shared(h, c, a->status, a->type, b);
}

/* A kept answer to key for this version of the trace, sent; MHD_NO with
 * *found false when there is none. */
static enum MHD_Result from_cache(struct cli_serve_http *h, struct MHD_Connection *c,
                                  const struct request *q, bool *found)
{
    pthread_mutex_lock(&h->lock);
    struct cache_entry *e = cache_find(h, q->key.key, q->size, q->mtime);
    *found = e != NULL;
    if (!e) {
        pthread_mutex_unlock(&h->lock);
        return MHD_NO;
    }
    struct body *b = e->body;
    unsigned status = e->status;
    const char *type = e->type;
    e->used = ++h->clock;
    b->refs++; /* the reply's */
    pthread_mutex_unlock(&h->lock);
    return reply_shared(h, c, status, type, b);
}

/* /api/NAME: the status at once (a stat of the file), a kept answer at
 * once, else the query queued for a worker and the connection suspended
 * until it ran; a full queue is answered 503 at once. */
static enum MHD_Result api(struct cli_serve_http *h, struct MHD_Connection *c, const char *name,
                           void **state)
{
    struct cli_serve_answer a = {0};
    struct request *q;
    bool found;

    if (!strcmp(name, "status")) {
        int rc = cli_serve_query(&h->trace, name, NULL, NULL, &a);
        enum MHD_Result r =
            rc < 0
                ? send_text(c, 500, "the server could not run the query\n")
                : queue(c, a.status, a.type,
                        MHD_create_response_from_buffer(a.body_len, a.body, MHD_RESPMEM_MUST_FREE));
        if (rc < 0)
            free(a.body);
        return r;
    }
    if (!(q = calloc(1, sizeof(*q))))
        return send_text(c, 500, "the server ran out of memory\n");
    *q = (struct request){.h = h, .c = c};
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->key.len = (size_t)snprintf(q->key.key, sizeof(q->key.key), "%s", name);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_to_key, &q->key);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, q);
    q->cacheable = cli_serve_trace_version(h->trace.path, &q->size, &q->mtime) == 0;
    enum MHD_Result r = MHD_NO;
    if (q->rc) {
        r = send_text(c, 500, "the server ran out of memory\n");
    } else if (q->cacheable && q->key.len < MAX_KEY && (r = from_cache(h, c, q, &found), found)) {
        /* answered */
    } else if (cli_serve_pool_push(h->pool, q)) {
        char busy[120];
        snprintf(busy, sizeof(busy), "memscribe serve is busy: %u queries wait; ask again\n",
                 cli_serve_pool_waiting(h->pool));
        r = queue(c, 503, "text/plain; charset=utf-8",
                  MHD_create_response_from_buffer(strlen(busy), busy, MHD_RESPMEM_MUST_COPY));
    } else {
        *state = q; /* freed when the request completes */
        MHD_suspend_connection(c);
        return MHD_YES;
    }
    request_free(q);
    return r;
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    struct cli_serve_http *h = cls;

    (void)version;
    (void)upload;
    if (*state && *state != h) { /* a query that ran: answer it */
        struct request *q = *state;
        return q->done ? answer(h, c, q) : MHD_YES;
    }
    if (!*state)
        atomic_fetch_add(&h->busy, 1); /* until completed */
    /* Only GET, without a body: anything else is answered at its headers,
     * its body unread. */
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return send_text(c, 405, "only GET\n");
    if (!*state) { /* the headers: answer once they are all here */
        if (has_body(c))
            return send_text(c, 413, "memscribe serve: a GET carries no body\n");
        *state = h;
        return MHD_YES;
    }
    *upload_size = 0; /* a GET's body, if any, is not read */
    if (!token_ok(h, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token")))
        return send_text(c, 403,
                         "memscribe serve: this address needs the token printed when the server "
                         "started (?token=...)\n");
    if (!strcmp(url, "/"))
        return reply(c, 200, "text/html; charset=utf-8", h->page, strlen(h->page));
    if (!strncmp(url, "/api/", 5) && strlen(url) < 40)
        return api(h, c, url + 5, state);
    return send_text(c, 404, "not here\n");
}

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A request ended (answered, or its connection closed): its query's
 * state goes. */
static void completed(void *cls, struct MHD_Connection *c, void **state,
                      enum MHD_RequestTerminationCode how)
{
    struct cli_serve_http *h = cls;

    (void)c;
    (void)how;
    if (*state && *state != cls)
        request_free(*state);
    *state = NULL;
    atomic_store(&h->last_ms, now_ms());
    if (atomic_load(&h->busy) > 0)
        atomic_fetch_sub(&h->busy, 1);
}

/* A connection from a client at its limit is refused at accept. */
static enum MHD_Result accept_client(void *cls, const struct sockaddr *addr, socklen_t len)
{
    struct cli_serve_http *h = cls;

    return cli_serve_client_may(&h->clients, cli_serve_client_key(&h->clients, addr, len)) ? MHD_YES
                                                                                           : MHD_NO;
}

/* Each connection's client counted from its start to its close. */
static void connection_note(void *cls, struct MHD_Connection *c, void **socket_state,
                            enum MHD_ConnectionNotificationCode code)
{
    struct cli_serve_http *h = cls;
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
    struct cli_serve_http *h = cls;
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

int cli_serve_http_start(struct cli_serve_http **out, const struct cli_serve_trace *t,
                         const struct cli_serve_http_options *o, uint16_t *port, char *msg,
                         size_t msg_size)
{
    struct sockaddr_storage ss;
    int family = bind_address(o->listen, o->port, &ss);
    struct cli_serve_http *h;

    if (family < 0) {
        snprintf(msg, msg_size, "--listen %s: not an IPv4 or IPv6 address", o->listen);
        return -EINVAL;
    }
    if (!(h = calloc(1, sizeof(*h))))
        return -ENOMEM;
    h->trace = *t;
    h->page = o->page;
    snprintf(h->token, sizeof(h->token), "%s", o->token);
    pthread_mutex_init(&h->lock, NULL);
    cli_serve_clients_init(&h->clients, o->port);
    int rc = cli_serve_pool_start(&h->pool, request_run, request_end);
    if (rc) {
        snprintf(msg, msg_size, "cannot start the query workers: %s", strerror(-rc));
        goto fail;
    }
    h->trace.stop = cli_serve_pool_stopping(h->pool);
    h->trace.end = &h->end;
    atomic_store(&h->last_ms, now_ms());
    /* One polling thread for every connection (a half-open one costs a
     * descriptor, not a thread); queries go to the pool, the connection
     * suspended meanwhile. Idle connections close after IDLE_S. */
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
    pthread_mutex_destroy(&h->lock);
    free(h);
    return rc;
}

void cli_serve_http_stop(struct cli_serve_http *h)
{
    if (!h)
        return;
    /* The queries queued end first, those running are cut short: every
     * suspended connection is handed back before the daemon stops. */
    cli_serve_pool_stop(h->pool);
    MHD_stop_daemon(h->d); /* every response is sent or dropped: its bodies released */
    cli_serve_clients_release(&h->clients);
    for (size_t i = 0; i < CACHE_ENTRIES; i++)
        cache_drop(h, &h->cache[i]);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void cli_serve_http_ended(struct cli_serve_http *h, int how)
{
    atomic_store(&h->end.how, how);
    atomic_store(&h->end.ended, 1);
}

uint64_t cli_serve_http_quiet_ms(struct cli_serve_http *h)
{
    uint64_t last = atomic_load(&h->last_ms), now = now_ms();

    return atomic_load(&h->busy) || now < last ? 0 : now - last;
}
