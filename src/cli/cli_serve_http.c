/* SPDX-License-Identifier: MIT */
/* memscribe serve's HTTP side (cli_serve_http.h). libmicrohttpd runs a
 * thread per connection, so a slow query (a large trace replayed) does not
 * hold up the page's other requests; each query runs memscribe's own
 * command in a child (cli_serve_query.c). */
#include "cli/cli_serve_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_serve_gzip.h"
#include "cli/cli_serve_index.h"

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

/* A query's parameter from the URL. */
static const char *param(void *arg, const char *name)
{
    return MHD_lookup_connection_value(arg, MHD_GET_ARGUMENT_KIND, name);
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

static enum MHD_Result api(struct cli_serve_http *h, struct MHD_Connection *c, const char *name)
{
    struct cache_key p;
    struct cli_serve_answer a = {0};
    uint64_t size = 0, mtime = 0;
    bool cacheable = strcmp(name, "status") != 0;
    int rc;

    p.len = (size_t)snprintf(p.key, sizeof(p.key), "%s", name);
    if (cacheable && cli_serve_trace_version(h->trace.path, &size, &mtime) == 0) {
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_to_key, &p);
        pthread_mutex_lock(&h->lock);
        struct cache_entry *e = p.len < MAX_KEY ? cache_find(h, p.key, size, mtime) : NULL;
        if (e) {
            struct body *b = e->body;
            unsigned status = e->status;
            const char *type = e->type;
            e->used = ++h->clock;
            b->refs++; /* the reply's */
            pthread_mutex_unlock(&h->lock);
            return reply_shared(h, c, status, type, b);
        }
        pthread_mutex_unlock(&h->lock);
    }
    rc = cli_serve_query(&h->trace, name, param, c, &a);
    if (rc < 0)
        return send_text(c, 500, "the server could not run the query\n");
    /* The command's output, its buffer's slack given back, becomes the
     * body the cache and the reply share. */
    struct body *b = malloc(sizeof(*b));
    char *data = a.body_len ? realloc(a.body, a.body_len) : a.body;
    if (!b || (a.body_len && !data)) {
        free(b);
        free(a.body);
        return send_text(c, 500, "the server ran out of memory\n");
    }
    *b = (struct body){1, a.body_len, data, a.gzip}; /* the reply's reference */
    /* Keep answers that are the trace's, not a passing failure. */
    pthread_mutex_lock(&h->lock);
    if (cacheable && (a.status == 200 || a.status == 400) && p.len < MAX_KEY)
        cache_put(h, p.key, size, mtime, a.status, a.type, b);
    pthread_mutex_unlock(&h->lock);
    return reply_shared(h, c, a.status, a.type, b);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    struct cli_serve_http *h = cls;

    (void)version;
    (void)upload;
    /* Only GET: anything else is answered at its headers, its body unread. */
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return send_text(c, 405, "only GET\n");
    if (!*state) { /* the headers: answer once they are all here */
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
        return api(h, c, url + 5);
    return send_text(c, 404, "not here\n");
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
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                MHD_USE_ERROR_LOG | (family == AF_INET6 ? MHD_USE_IPv6 : 0),
                            o->port, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    if (!h->d) {
        int e = errno ? errno : EADDRINUSE;
        snprintf(msg, msg_size, "cannot listen on %s port %u: %s", o->listen, (unsigned)o->port,
                 strerror(e));
        pthread_mutex_destroy(&h->lock);
        free(h);
        return -e;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    *port = di ? di->port : o->port;
    *out = h;
    return 0;
}

void cli_serve_http_stop(struct cli_serve_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d); /* every response is sent or dropped: its bodies released */
    for (size_t i = 0; i < CACHE_ENTRIES; i++)
        cache_drop(h, &h->cache[i]);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
